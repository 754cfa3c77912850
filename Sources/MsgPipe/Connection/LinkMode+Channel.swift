import BLELink

extension LinkMode {
    /// The SDU size msgpipe's L2CAP channel asks for: the most bytes one channel send carries, framing
    /// included (a packet carries 2 bytes less). A model of the channel (the simulator's) uses it as its default.
    public static let channelSDU = StreamLink.preferredUnit
}

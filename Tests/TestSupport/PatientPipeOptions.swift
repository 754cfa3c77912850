public import MsgPipeCore

extension MessagePipe.Options {
    /// The default options, but a listener waits a hang guard for each central's first hello instead of the
    /// product's 10 s. A test that runs a listener and its central in one process on two busy cores may see the
    /// central's GATT setup and hello come late; the listener would close that connection (and a keyed one would
    /// count a refused handshake), failing a test about something else. A keyed listener also waits
    /// ``MessagePipe/Options/handshakeTimeout`` at most: a test raises that one itself.
    ///
    /// ```swift
    /// let server = try await MessagePipe.listen(path: path, options: .patientForTests)
    /// ```
    public static var patientForTests: MessagePipe.Options {
        var options = MessagePipe.Options()
        options.helloTimeout = hangGuard
        return options
    }
}

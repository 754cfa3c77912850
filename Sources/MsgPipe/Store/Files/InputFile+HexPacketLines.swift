public import MsgPipeCore

extension InputFile {
    /// Reads the input to its end as hex packet lines through `decoder`, streaming in 64 KiB chunks, and hands
    /// each reassembled message's bytes to `onMessage` in order (what `msgpipe deframe` does). Returns nil when
    /// the input ended with no message left partial, else the first problem; reading stops there. Throws
    /// ``FileIOError`` when a read fails, and what `onMessage` throws.
    ///
    /// ```swift
    /// var decoder = HexPacketLineDecoder(format: .msgpipe, limits: ReassemblyLimits())
    /// let problem = try InputFile(path: "packets.txt").decodeHexPacketLines(with: &decoder) { print($0.count) }
    /// ```
    public func decodeHexPacketLines(
        with decoder: inout HexPacketLineDecoder, onMessage: ([UInt8]) throws(FileIOError) -> Void
    ) throws(FileIOError) -> HexPacketLineError? {
        var chunk: [UInt8] = []
        var events: [HexPacketLineDecoder.Event] = []
        repeat {
            chunk.removeAll(keepingCapacity: true)
            events.removeAll(keepingCapacity: true)
            if try read(appendingTo: &chunk, count: 1 << 16) > 0 {
                decoder.receive(chunk[...]) { events.append($0) }
            } else {
                decoder.finish { events.append($0) }
            }
            for event in events {
                switch event {
                case let .message(body): try onMessage(body)
                case let .failure(problem): return problem
                }
            }
        } while !chunk.isEmpty
        return nil
    }
}

import Framing
import FuzzSupport

/// The stream deframer (`StreamDeframer`, PROTOCOL.md 7.1) fed a peer's byte stream in the chunks the input
/// picks: `[chunk length][chunk bytes]...`. After every chunk it holds at most one frame; every packet it
/// hands out is 1...limit bytes and, framed again, is exactly the bytes the stream carried for it; once it
/// refused a length it refuses everything until reset.
enum StreamFramesFuzzTarget {
    static let limit = 300

    static func run(_ input: [UInt8]) {
        var script = FuzzScript(input)
        var deframer = StreamDeframer(maximumFrameSize: limit)
        var stream: [UInt8] = []
        var framed: [UInt8] = []
        var failed = false
        while !script.isAtEnd {
            let chunk = script.chunk()
            stream += chunk
            do {
                try deframer.receive(chunk) { packet in
                    require((1 ... limit).contains(packet.count), "a packet of \(packet.count) bytes")
                    try StreamFrames.append(packet, to: &framed)
                }
                require(!failed, "a deframer that refused a length took more bytes")
            } catch {
                failed = true
            }
            require(deframer.pendingBytes <= limit, "holds \(deframer.pendingBytes) bytes")
            require(stream.starts(with: framed), "the packets handed out are not the stream's frames")
        }
    }

    /// PROTOCOL.md 7.1's vectors, split across chunks.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        [
            ("one", [5] + hex("0100 01 0300")),
            ("split", [1] + hex("03") + [4] + hex("00 010203")),
            ("zero", [4] + hex("0100 41 00") + [1] + hex("00")),
            ("large", [2] + hex("ff ff")),
        ]
    }
}

@main
struct StreamFramesFuzzer {
    static func main() {
        FuzzDriver.run(name: "StreamFramesFuzzer", seeds: StreamFramesFuzzTarget.seeds, target: StreamFramesFuzzTarget.run)
    }
}

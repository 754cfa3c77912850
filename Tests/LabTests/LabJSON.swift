import Foundation
import Framing

/// One `msgpipe send --json` line (the fields the lab judges).
struct SendLine: Decodable {
    let index: Int
    let bytes: Int
    let seconds: Double
    let link: String?
    /// As peripheral the central's address; with several `--to` the name it went to; absent otherwise.
    let peer: String?
}

/// One `msgpipe listen --json` line (the fields the lab judges).
struct ListenLine: Decodable {
    let index: Int
    let bytes: Int
    let crc32: String
    let data: String
    let link: String?
    /// The address it came from, or the `--to` name of a central listening to several peripherals.
    let peer: String?
    /// The name of the key that sealed the message in listen's authorized-keys file; absent without one.
    let peerName: String?

    private enum CodingKeys: String, CodingKey {
        case index, bytes, crc32, data, link, peer
        case peerName = "peer_name"
    }

    /// The message's bytes (nil when `data` is not base64).
    var body: [UInt8]? { Data(base64Encoded: data).map { [UInt8]($0) } }
}

/// CRC-32 as `listen --json` prints it: 8 lowercase hex digits.
func crc32Hex(_ bytes: [UInt8]) -> String {
    let digits = String(CRC32.checksum(bytes), radix: 16)
    return String(repeating: "0", count: 8 - digits.count) + digits
}

import FoundationEssentials
import MsgPipe

/// One `listen --json` line: {"bytes":B,"connection":C,"crc32":"8 hex digits","data":"base64","id":ID,"index":N,
/// "link":"gatt"|"l2cap","peer":"ADDRESS","peer_key":"msgpipe-x25519-public:HEX","peer_name":"NAME"}, and
/// ``LinkParameterFields``.
struct MessageLine: Encodable {
    let index: Int
    let connection: Int
    /// The peer's address (or socket path) it came from; absent where unknown.
    let peer: String?
    /// What carried the message: "gatt" or "l2cap"; absent where unknown (a peripheral's msgpipe session).
    let link: String?
    /// Transport's message id; null (not absent) for the plain formats.
    let id: OrNull<UInt32>
    let bytes: Int
    let crc32: String
    let data: String
    /// End to end (`--authorized-keys`, `--peer-key`): the public key that sealed the message; absent otherwise.
    let peerKey: String?
    /// The name of `peerKey` in the authorized-keys file; absent without one.
    let peerName: String?

    enum CodingKeys: String, CodingKey {
        case index, connection, peer, link, id, bytes, crc32, data
        case peerKey = "peer_key"
        case peerName = "peer_name"
    }

    /// The line of the `index`th message written (`MessageOutput`'s `.lines`).
    static func text(_ item: MessageOutput.Item, index: Int) -> String {
        let line = MessageLine(
            index: index, connection: item.connection, peer: item.peer, link: item.carrier, id: OrNull(item.messageID),
            bytes: item.body.count, crc32: Hex.string(CRC32.checksum(item.body)), data: Data(item.body).base64EncodedString(),
            peerKey: item.sender?.key.text, peerName: item.sender?.name)
        return JSONLine.text(line, adding: LinkParameterFields(item.parameters))
    }
}

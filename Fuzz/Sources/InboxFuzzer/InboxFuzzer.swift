import FuzzSupport
import Glibc
@_spi(Fuzzing) import MsgPipe

/// The delivery journal (PROTOCOL.md 3.10) and the outbox's state file (3.11), parsers of disk bytes:
///
/// 1. A record decoded from the start of the input must encode to exactly the bytes it was read from.
/// 2. The journal reader: the input, after the journal header (or alone, when it begins with 0xFF), is the
///    file `DeliveryJournal` opens from disk (in /dev/shm, so no disk is worn). It either refuses with a typed
///    error or opens, possibly cutting a torn tail; then a new message is recorded, and the journal must reopen
///    with no repair needed, know that message, and remember no more sessions than its bound.
/// 3. The outbox state: the input as `.msgpipe-outbox` (after its header, or alone when it begins with 0xFE)
///    either decodes to a state that encodes to exactly the input, or is refused; `MessageOutbox` opens on it
///    or refuses with a typed error, and one that opened takes a message and reopens with the same session.
enum InboxFuzzTarget {
    static let directory: String = {
        let path = "/dev/shm/msgpipe-fuzz-inbox-\(getpid())"
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { fatalError("cannot create \(path)") }
        return path
    }()
    static let retainedSessions = 3

    static func run(_ input: [UInt8]) {
        if let (encoded, count) = DeliveryRecordCodec.reencode(input[...]) {
            require(encoded == Array(input.prefix(count)), "record \(input.prefix(count)) re-encodes to \(encoded)")
        }
        checkJournal(input)
        checkOutbox(input)
    }

    static let outboxDirectory: String = {
        let path = "/dev/shm/msgpipe-fuzz-outbox-\(getpid())"
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { fatalError("cannot create \(path)") }
        return path
    }()

    static func checkOutbox(_ input: [UInt8]) {
        let bytes = input.first == 0xFE ? Array(input.dropFirst()) : OutboxStateCodec.header + input
        if let state = try? OutboxState(decoding: bytes) {
            require(state.encoded() == bytes, "outbox state \(bytes) re-encodes to \(state.encoded())")
        }
        for name in OutboxStateCodec.files(in: outboxDirectory) { unlink(outboxDirectory + "/" + name) }
        FuzzDriver.write(bytes, to: outboxDirectory + "/.msgpipe-outbox")
        let session: UInt64
        do {
            let outbox: MessageOutbox
            do {
                outbox = try MessageOutbox(directory: outboxDirectory)
            } catch {
                return  // refused: not an outbox state, or damaged
            }
            session = outbox.senderSession.id
            do { try outbox.enqueue([1, 2, 3]) } catch { fatalError("an opened outbox refused a message: \(error)") }
            outbox.close()
        }
        do {
            let reopened = try MessageOutbox(directory: outboxDirectory)
            require(reopened.senderSession.id == session, "the session changed across a reopen")
            require(reopened.entries.count == 1, "\(reopened.entries.count) messages after one enqueue")
            reopened.close()
        } catch {
            fatalError("an outbox does not reopen: \(error)")
        }
    }

    static func checkJournal(_ input: [UInt8]) {
        let path = directory + "/.msgpipe-delivered"
        unlink(path + ".tmp")
        FuzzDriver.write(input.first == 0xFF ? Array(input.dropFirst()) : DeliveryRecordCodec.header + input, to: path)
        do {
            let journal: DeliveryJournal
            do {
                journal = try DeliveryJournal(directory: directory, retainedSessions: retainedSessions, logger: nil)
            } catch {
                return  // refused: not a delivery journal, or corrupt before its end
            }
            do {
                try journal.recordKept(session: 0xF0220, id: 7)
            } catch {
                fatalError("an opened journal refused to record: \(error)")
            }
        }
        let reopened: DeliveryJournal
        do {
            reopened = try DeliveryJournal(directory: directory, retainedSessions: retainedSessions, logger: nil)
        } catch {
            fatalError("a journal written after recovery does not reopen: \(error)")
        }
        require(reopened.recoveryNote == nil, "a recovered journal needed repair again: \(reopened.recoveryNote ?? "")")
        require(reopened.contains(session: 0xF0220, id: 7), "the message recorded after recovery is not known")
        require(reopened.sessionCount <= retainedSessions, "\(reopened.sessionCount) sessions remembered")
    }
}

@main
enum InboxFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "InboxFuzzer", seeds: seeds, target: InboxFuzzTarget.run)
    }

    /// PROTOCOL.md 3.10's vectors, alone and as journal files (whole, with a torn tail, corrupt in the middle).
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let kept = hex("4b4b000000180102030405060708000000053030303030303031" + "2e6d7367f16ad2c0")
        let published = hex("4b5000000000fe3138d6")
        return [
            ("kept", kept), ("published", published), ("journal", kept + published + kept),
            ("torn", kept + Array(published.prefix(7))), ("corrupt-middle", Array(kept.dropLast()) + [0] + published),
            ("foreign", [0xFF] + Array("msgpipe journal 1\n".utf8)), ("zeros", kept + [0, 0, 0, 0, 0, 0, 0, 0]),
            ("outbox-state", hex("4f530000000c01020304050607080000000549e54442")),
        ]
    }
}

import FuzzSupport
import Glibc
@_spi(Fuzzing) import MsgPipeStore

/// The delivery journal (PROTOCOL.md 3.10), a parser of disk bytes:
///
/// 1. A record decoded from the start of the input must encode to exactly the bytes it was read from.
/// 2. The journal reader: the input, after the journal header (or alone, when it begins with 0xFF), is the
///    file `DeliveryJournal` opens from disk (in /dev/shm, so no disk is worn). It either refuses with a typed
///    error or opens, possibly cutting a torn tail; then a new message is recorded, and the journal must reopen
///    with no repair needed, know that message, and remember no more sessions than its bound.
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
        ]
    }
}

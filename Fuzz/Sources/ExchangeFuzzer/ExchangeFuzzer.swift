@_spi(Fuzzing) import Exchange
import ExchangePosix
import FuzzSupport
import Glibc

/// Exchange's parsers (PROTOCOL.md 6.5 and 6.6):
///
/// 1. The whole input is decoded as a request envelope, a response envelope and a journal record; what decodes
///    must encode to exactly the same bytes.
/// 2. The journal reader: the input, after the journal header (or alone, when it begins with 0xFF), is the
///    journal file `IdempotencyJournal` opens from disk (in /dev/shm, so no disk is worn). It either refuses with
///    a typed error or opens, possibly cutting a torn tail; then a new request is recorded, and the journal must
///    reopen with no repair needed and return that request's response byte for byte.
enum ExchangeFuzzTarget {
    static let directory: String = {
        let path = "/dev/shm/msgpipe-fuzz-journal-\(getpid())"
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { fatalError("cannot create \(path)") }
        return path
    }()
    static let limits = ExchangeLimits(maximumRequestSize: 256, maximumResponseSize: 256, retainedRequests: 3)
    static let header = Array("msgpipe journal 1\n".utf8)
    static let newID = try! RequestID("fuzz-new")
    static let digest = [UInt8](repeating: 0x5A, count: 32)

    static func run(_ input: [UInt8]) {
        if let request = try? RequestEnvelope(decoding: input) {
            require(request.encoded() == input, "request \(input) re-encodes to \(request.encoded())")
        }
        if let response = try? ResponseEnvelope(decoding: input) {
            require(response.encoded() == input, "response \(input) re-encodes to \(response.encoded())")
        }
        if let record = JournalRecordCodec.reencode(input[...]) {
            require(record == input, "journal record \(input) re-encodes to \(record)")
        }
        checkJournal(input)
    }

    static func checkJournal(_ input: [UInt8]) {
        let path = directory + "/journal"
        unlink(path + ".tmp")
        FuzzDriver.write(input.first == 0xFF ? Array(input.dropFirst()) : header + input, to: path)
        let response = ResponseEnvelope(id: newID, status: .commandFailed, exitCode: 3, body: Array("fuzzed".utf8))
        do {
            let journal: IdempotencyJournal
            do {
                journal = try IdempotencyJournal(directory: directory, limits: limits)
            } catch {
                return  // refused: not a journal, or corrupt before its end
            }
            do {
                try journal.recordStarted(newID, digest: digest)
                try journal.recordCompleted(digest: digest, response: response)
            } catch {
                fatalError("an opened journal refused to record: \(error)")
            }
        }
        let reopened: IdempotencyJournal
        do {
            reopened = try IdempotencyJournal(directory: directory, limits: limits)
        } catch {
            fatalError("a journal written after recovery does not reopen: \(error)")
        }
        require(reopened.recoveryNote == nil, "a recovered journal needed repair again: \(reopened.recoveryNote ?? "")")
        require((try? reopened.entry(for: newID)) == .completed(digest: digest, response: response),
                "the response recorded after recovery does not read back")
        require(reopened.completedCount <= limits.retainedRequests, "\(reopened.completedCount) answered ids kept")
    }
}

@main
enum ExchangeFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "ExchangeFuzzer", seeds: seeds, target: ExchangeFuzzTarget.run)
    }

    /// PROTOCOL.md 6.5 envelope vectors and journal records (alone, and as journal files with a torn tail).
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let request = hex("0151057061792d3131322e3530")
        let response = hex("01520103057061792d316e6f")
        let digest = [UInt8](repeating: 0xAB, count: 32)
        func record(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
            let count = UInt32(payload.count)
            let body = [type, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + payload
            let crc = crc32(body)
            return [0x4A] + body + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        }
        let started = record(0x53, digest + [5] + Array("pay-1".utf8))
        let completed = record(0x43, digest + response)
        return [
            ("request", request),
            ("response", response),
            ("started", started),
            ("completed", completed),
            ("journal", started + completed + record(0x53, digest + [1, 0x62])),
            ("torn", started + completed.dropLast(3)),
            ("zeros", started + [UInt8](repeating: 0, count: 20)),
            ("raw-file", [0xFF] + Array("msgpipe journal 1\n".utf8) + started),
        ]
    }

    /// CRC-32 (IEEE), as the journal records carry it.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

import BLELink
import FuzzSupport
import Glibc

/// The bond store's parser of disk bytes, and the mgmt key events it is fed from:
///
/// 1. The input as a bond file (`BondFile(decoding:)`): it is refused with a line number, or it decodes, and
///    what it decodes to encodes to a file that decodes to the same bonds and encodes to itself again.
/// 2. The input, written as a bond file in /dev/shm, through `BondStore.load()`: a refusal leaves the file's
///    bytes exactly as they were (a corrupt file is never overwritten).
/// 3. The input as the parameters of New Long Term Key, New Identity Resolving Key, New Signature Resolving Key,
///    New Connection Parameter and Load Long Term Keys: what decodes encodes back to the same bytes.
enum BondStoreFuzzTarget {
    static let directory: String = {
        let path = "/dev/shm/msgpipe-fuzz-bonds-\(getpid())"
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { fatalError("cannot create \(path)") }
        return path
    }()
    static let store = BondStore(directory: directory, adapter: BluetoothAddress("00:AA:01:00:00:00")!)

    static func run(_ input: [UInt8]) {
        if let bonds = try? BondFile(decoding: input[...]) {
            let encoded = bonds.encoded()
            guard let again = try? BondFile(decoding: encoded[...]) else {
                fatalError("decoded bonds encode to a file that does not decode: \(encoded)")
            }
            require(again == bonds, "bonds change through encode and decode")
            require(again.encoded() == encoded, "the encoding is not stable")
        }
        FuzzDriver.write(input, to: store.path)
        if (try? store.load()) == nil {
            require(FuzzDriver.read(store.path) == input, "a refused bond file was changed")
        }
        roundTrip(input) { bytes in
            guard let event = try? NewLongTermKey(decoding: bytes[...]) else { return nil }
            var out: [UInt8] = []
            event.encode(into: &out)
            return out
        }
        roundTrip(input) { bytes in
            guard let event = try? NewIdentityResolvingKey(decoding: bytes[...]) else { return nil }
            var out: [UInt8] = []
            event.encode(into: &out)
            return out
        }
        roundTrip(input) { bytes in
            guard let event = try? NewSignatureResolvingKey(decoding: bytes[...]) else { return nil }
            var out: [UInt8] = []
            event.encode(into: &out)
            return out
        }
        roundTrip(input) { bytes in
            guard let event = try? NewConnectionParameter(decoding: bytes[...]) else { return nil }
            _ = try? event.connectionParameters()
            var out: [UInt8] = []
            event.encode(into: &out)
            return out
        }
        roundTrip(input) { bytes in
            guard let command = try? LoadLongTermKeys(decoding: bytes[...]) else { return nil }
            var out: [UInt8] = []
            command.encode(into: &out)
            return out
        }
        _ = try? ManagementEvent(decoding: input[...])
    }

    static func roundTrip(_ input: [UInt8], _ reencode: ([UInt8]) -> [UInt8]?) {
        if let out = reencode(input) { require(out == input, "\(input) re-encodes to \(out)") }
    }
}

@main
enum BondStoreFuzzerMain {
    static func main() {
        FuzzDriver.run(name: "BondStoreFuzzer", seeds: seeds, target: BondStoreFuzzTarget.run)
    }

    /// A bond file with each kind of key, its truncations at line ends, and the mgmt key events' spec bytes.
    static func seeds() -> [(name: String, bytes: [UInt8])] {
        let file = """
            msgpipe-bonds 1
            ltk 00:AA:01:01:00:01 public type=00 central=1 size=7 ediv=beef rand=0102030405060708 value=000102030405060708090a0b0c0d0e0f
            ltk C0:11:22:33:44:55 random type=02 central=0 size=16 ediv=0000 rand=0000000000000000 value=101112131415161718191a1b1c1d1e1f
            irk C0:11:22:33:44:55 random value=202122232425262728292a2b2c2d2e2f
            csrk C0:11:22:33:44:55 random type=01 value=303132333435363738393a3b3c3d3e3f

            """
        let peer: [UInt8] = [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0, 0x02]
        let key = [UInt8](0x00...0x0F)
        return [
            ("bond-file", Array(file.utf8)),
            ("header-only", Array("msgpipe-bonds 1\n".utf8)),
            ("new-ltk", [0x01] + peer + [0x02, 0x00, 0x10, 0x34, 0x12, 1, 2, 3, 4, 5, 6, 7, 8] + key),
            ("new-irk", [0x01, 0x4F, 0x3E, 0x2D, 0x1C, 0x0B, 0x5A] + peer + key),
            ("new-csrk", [0x01] + peer + [0x01] + key),
            ("new-conn-param", peer + [0x01, 0x50, 0x00, 0x78, 0x00, 0x00, 0x00, 0x2A, 0x00]),
            ("load-ltks", [0x01, 0x00] + peer + [0x02, 0x00, 0x10, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0] + key),
        ]
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// What a fuzz target's `main` hands to ``FuzzDriver/run(name:seeds:target:)``: a function of one input
/// that traps when an invariant breaks.
public typealias FuzzTarget = ([UInt8]) -> Void

/// The running target (set once, before libFuzzer or the replay loop calls it).
nonisolated(unsafe) private var currentTarget: FuzzTarget?

/// libFuzzer's entry point: one input, once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    currentTarget?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

#if FUZZING
/// libFuzzer's driver (`-sanitize=fuzzer` links it). SwiftPM renames an executable's entry point and aliases
/// `main` to it, so libFuzzer's own `main` is never linked: ``FuzzDriver/run(name:seeds:target:)`` starts
/// the driver instead.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
#endif

/// The `main` of every fuzz target.
///
/// - `TARGET --write-seeds DIR` writes the seeds (spec vectors and encoder output) as files into DIR.
/// - Built with `-DFUZZING` (and `-sanitize=fuzzer`): the libFuzzer driver with the command-line flags.
/// - Otherwise: each file named on the command line runs through the target once (reproducing a finding).
public enum FuzzDriver {
    public static func run(name: String, seeds: () -> [(name: String, bytes: [UInt8])], target: @escaping FuzzTarget) -> Never {
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "--write-seeds" {
            for seed in seeds() {
                for item in seeds() where item.name == seed.name && item.bytes != seed.bytes {
                    fatalError("\(name): two different seeds are named \(seed.name)")
                }
                write(seed.bytes, to: arguments[2] + "/seed-" + seed.name)
            }
            exit(0)
        }
        currentTarget = target
        #if FUZZING
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
        #else
        for path in arguments.dropFirst() {
            guard let input = read(path) else {
                print("\(name): cannot open \(path)")
                exit(2)
            }
            target(input)
            print("\(path): \(input.count) bytes, no finding")
        }
        exit(0)
        #endif
    }

    /// The whole file at `path`, or nil when it cannot be opened.
    public static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var input: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case let count = fread(&chunk, 1, chunk.count, file), count > 0 { input += chunk[0..<count] }
        return input
    }

    /// Writes `bytes` to `path`, replacing it; traps when it cannot.
    public static func write(_ bytes: [UInt8], to path: String) {
        guard let file = fopen(path, "wb") else { fatalError("cannot create \(path)") }
        defer { fclose(file) }
        guard bytes.isEmpty || fwrite(bytes, 1, bytes.count, file) == bytes.count else { fatalError("cannot write \(path)") }
    }
}

/// Traps with `message` when `condition` is false (in every build mode, message included): libFuzzer reports
/// the trap as a crash and saves the input.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// Bytes from hex digits; spaces are ignored (for seeds copied from docs/PROTOCOL.md and the vector tests).
public func hex(_ text: String) -> [UInt8] {
    let digits = text.utf8.filter { $0 != UInt8(ascii: " ") }.map { byte -> UInt8 in
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: fatalError("not a hex digit in \(text)")
        }
    }
    precondition(digits.count % 2 == 0, "odd number of hex digits in \(text)")
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

/// Reads a fuzz input as a script: bytes and small numbers taken from the front, never trapping at the end.
public struct FuzzScript {
    public private(set) var bytes: ArraySlice<UInt8>

    public init(_ input: [UInt8]) { bytes = input[...] }

    public var isAtEnd: Bool { bytes.isEmpty }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    /// The next two bytes as a little-endian number, 0 past the end.
    public mutating func uint16() -> Int { Int(byte()) | Int(byte()) << 8 }

    /// The next `count` bytes (fewer at the end).
    public mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return taken
    }

    /// A chunk prefixed by its one-byte length.
    public mutating func chunk() -> ArraySlice<UInt8> { take(Int(byte())) }
}

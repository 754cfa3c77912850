import Foundation
import Testing

extension Lab.StockBox {
    static let bluez = ["--backend", "bluez"]
    static let kibibytes256 = 256 << 10

    /// The lab's Python packages (bleak and its D-Bus library dbus-fast), installed by `Scripts/blelab.sh
    /// --setup-bleak` with `pip install --target`.
    static let pythonPath = (ProcessInfo.processInfo.environment["BLELAB_DIR"] ?? "/tmp/blelab") + "/python"

    /// Whether python3 imports bleak from `pythonPath` (asked once, inside the lab only).
    static let hasBleak: Bool = {
        guard LabEnvironment.current != nil else { return false }
        return labShell(["env", "PYTHONPATH=\(pythonPath)", "python3", "-c", "import bleak"]).status == 0
    }()

    /// Runs `body` as `run(debug:_:)` does, or, when `why` is given, reports the test as a skip for that reason
    /// without starting anything: the lab cannot run it (a controller or a peer program is missing).
    static func run(unless why: String?, _ body: (LabCheck, LabBluetoothd) throws -> Void) {
        if let why {
            LabCheck.run { $0.skip(why) }
        } else {
            run(body)
        }
    }

    /// Starts the lab's Python peer Tests/lab/SCRIPT with `pythonPath` on its path.
    static func startPython(_ lab: LabCheck, _ label: String, _ script: String, _ arguments: [String]) throws -> LabProcess {
        try lab.start(label, "/usr/bin/env", ["PYTHONPATH=\(pythonPath)", "python3", labScript(script)] + arguments)
    }

    /// The path of Tests/lab/NAME (the lab runs the tests from the package's directory).
    static func labScript(_ name: String) -> String { FileManager.default.currentDirectoryPath + "/Tests/lab/" + name }

    /// Decodes the legacy-format values in `log` (gatttool, nus_peripheral.py or bleak_central.py lines) with
    /// Tests/lab/legacy_decode.py, the decoder written apart from Sources/Framing: the process (exit 0 only for
    /// one whole message, or with `tiles` for values that are exactly the file's pieces) and what it decoded.
    static func legacyDecode(_ lab: LabCheck, _ label: String, _ log: URL, tiles: URL? = nil) throws -> (LabProcess, [UInt8]) {
        let decoded = lab.directory.appendingPathComponent("\(label).bin")
        let decoder = try lab.run(label, "/usr/bin/python3", [labScript("legacy_decode.py"), log.path, decoded.path]
            + (tiles.map { ["--tiles", $0.path] } ?? []), seconds: 60)
        return (decoder, (try? Data(contentsOf: decoded)).map { [UInt8]($0) } ?? [])
    }

    /// `count` printable bytes (base64 of random bytes): a message the lines format carries as it is.
    static func randomText(_ count: Int) -> [UInt8] {
        Array(Data(LabCheck.randomBytes(count)).base64EncodedString().utf8.prefix(count))
    }
}

// swift-tools-version: 6.1
import PackageDescription

/// Strict settings shared by every Swift target: Swift 6 mode is the default for tools 6.x.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// MSGPIPE_COMMIT, when the build's environment has it, as a C string literal for CBuildInfo.
let buildCommit: [CSetting] = Context.environment["MSGPIPE_COMMIT"].map { [.define("MSGPIPE_COMMIT", to: "\"\($0)\"")] } ?? []

let package = Package(
    name: "msgpipe",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Framing", targets: ["Framing"]),
        .library(name: "Backpressure", targets: ["Backpressure"]),
        .library(name: "Transport", targets: ["Transport"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "BluetoothCore", targets: ["BluetoothCore"]),
        .library(name: "PollThread", targets: ["PollThread"]),
        .library(name: "BLESocket", targets: ["BLESocket"]),
        .library(name: "BLELink", targets: ["BLELink"]),
        .library(name: "SDBus", targets: ["SDBus"]),
        .library(name: "BlueZLink", targets: ["BlueZLink"]),
        .library(name: "MemoryLinks", targets: ["MemoryLinks"]),
        .library(name: "Simulator", targets: ["Simulator"]),
        .library(name: "Secure", targets: ["Secure"]),
        .library(name: "Exchange", targets: ["Exchange"]),
        .library(name: "ExchangePosix", targets: ["ExchangePosix"]),
        .library(name: "MsgPipeCore", targets: ["MsgPipeCore"]),
        .library(name: "MsgPipe", targets: ["MsgPipe"]),
        .library(name: "MsgPipeMQTT", targets: ["MsgPipeMQTT"]),
        .executable(name: "msgpipe", targets: ["msgpipe"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // `swift package generate-documentation`: DocC for the library modules (Scripts/docs.sh).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.27.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        // C libraries from Debian: zlib1g-dev (zlib licence) and libbluetooth-dev (GPL-2.0-or-later).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // libsystemd's sd-bus (LGPL-2.1-or-later, libsystemd-dev) for the BlueZ D-Bus backend, and the C it needs
        // where Swift cannot reach (sd-bus vtables are C macros).
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "CSDBusShim", dependencies: ["CSystemd"]),
        // paho.mqtt.c's MQTTAsync (libpaho-mqtt-dev, EPL-2.0/EDL-1.0; no pkg-config file, the module map links
        // paho-mqtt3as), and the C that fills its option structs (C initializer macros).
        .systemLibrary(name: "CPahoMQTT", providers: [.apt(["libpaho-mqtt-dev"])]),
        .target(name: "CMQTTShim", dependencies: ["CPahoMQTT"]),
        // The commit `msgpipe --version` names: MSGPIPE_COMMIT from the build's environment (Scripts/package.sh
        // sets it), else "unknown". Only this C file sees it, so a new commit recompiles nothing else.
        .target(name: "CBuildInfo", cSettings: buildCommit),
        // syncfs(2), which Swift's Glibc module does not declare (it needs _GNU_SOURCE).
        .target(name: "CFileSync"),

        // Pure layers: no OS API, no libbluetooth.
        .target(name: "Framing", dependencies: ["CZlib"], swiftSettings: strict),
        .target(
            name: "Backpressure",
            dependencies: [.product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: strict),
        .target(
            name: "Transport",
            dependencies: [
                "Framing", "Backpressure", "CZlib",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict),

        // End-to-end encryption over Transport: pure Swift and swift-crypto, no OS API.
        .target(
            name: "Secure",
            dependencies: [
                "Framing", "Transport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Request/response over Secure or Transport: envelopes, RequestServer, the journal's record format, the
        // reloadable keyring, and the protocols of what a server needs from the OS. Pure: no Glibc, no Foundation.
        .target(
            name: "Exchange",
            dependencies: [
                "Framing", "Backpressure", "Transport", "Secure",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Exchange's OS side, as NIOPosix is NIOCore's: the fsync'd idempotency journal and the directory lock,
        // the command runner (posix_spawn, poll), and key files read with their checks (uses Glibc).
        .target(
            name: "ExchangePosix",
            dependencies: [
                "Exchange", "Secure",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict),

        // Beside Transport, as NIOEmbedded is beside NIOCore: in-memory and fault-injecting links for tests and
        // benchmarks, and the BLE air-time simulator behind `msgpipe bench --link sim`. Pure, no OS API.
        .target(
            name: "MemoryLinks",
            dependencies: ["Transport", "Backpressure"],
            swiftSettings: strict),
        .target(
            name: "Simulator",
            dependencies: ["Transport", "Framing", "MemoryLinks", "GATT"],
            swiftSettings: strict),

        // ATT PDUs, the GATT database, server and client state machines, the service profiles and GATTLink:
        // pure Swift over any ATT bearer, no Glibc, no libbluetooth.
        .target(
            name: "GATT",
            dependencies: ["Transport", "Backpressure"],
            swiftSettings: strict),

        // The Bluetooth values every backend and the connection library speak in (addresses, peers, PHYs,
        // security levels, the reconnect policy, scan results and filters, adapter selectors, the per-adapter
        // connect queue): pure Swift, no OS API. BLELink re-exports it.
        .target(name: "BluetoothCore", dependencies: ["GATT", "Backpressure"], swiftSettings: strict),

        // The detached POSIX thread and the wake pipe every OS binding's poll loop runs on (Glibc only).
        .target(name: "PollThread", swiftSettings: strict),
        // The socket base both Linux backends run on: the SEQPACKET ATT bearer and stream link, UNIX SEQPACKET
        // sockets, a link's PHY from BT_PHY, blocking calls on a thread of their own (Glibc, no libbluetooth).
        .target(
            name: "BLESocket",
            dependencies: ["BluetoothCore", "GATT", "Transport", "Framing", "Backpressure", "PollThread"],
            swiftSettings: strict),
        // The kernel backend over BLESocket: kernel L2CAP, mgmt, bonds and connection parameters (the only
        // libbluetooth user).
        .target(
            name: "BLELink",
            dependencies: [
                "BLESocket", "BluetoothCore", "GATT", "Transport", "Framing", "Backpressure", "PollThread", "CBluetooth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict),
        // D-Bus over sd-bus: connections, calls, signals, exported objects, message coding; no BlueZ knowledge
        // (the only libsystemd user).
        .target(
            name: "SDBus",
            dependencies: [
                "PollThread", "CSystemd", "CSDBusShim", .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict),
        // The bluetoothd backend over SDBus: peripheral, central, discovery and the acquired links, on BLESocket's
        // socket base (no kernel backend: no BLELink).
        .target(
            name: "BlueZLink",
            dependencies: [
                "BLESocket", "SDBus", "BluetoothCore", "GATT", "Transport", "Backpressure",
            ],
            swiftSettings: strict),

        // The connection library a Swift program uses, without a backend: pipes and servers, the stack protocol a
        // backend implements, connecting with retries, reconnect and resume, several centrals, plain formats.
        // Pure: no Glibc, no Foundation, no BLELink.
        .target(
            name: "MsgPipeCore",
            dependencies: [
                "Framing", "Backpressure", "Transport", "GATT", "BluetoothCore", "Secure", "Exchange",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // MsgPipeCore with msgpipe's Linux backends (the kernel's, bluetoothd's, a UNIX socket's), the factory
        // that picks one, the accept loop, scanning, the benchmark `msgpipe bench` runs on a real link (its messages
        // and limit are the simulator's), a service's signals and systemd readiness (swift-service-lifecycle,
        // libsystemd), and durable storage (Store/: the inbox keeps received messages in fsync'd files and a
        // delivery journal before they are acknowledged; the outbox queues messages until acknowledged):
        // `import MsgPipe` gives all of it.
        .target(
            name: "MsgPipe",
            dependencies: [
                "MsgPipeCore", "BluetoothCore", "Framing", "Backpressure", "Transport", "GATT", "BLESocket", "BLELink", "BlueZLink",
                "SDBus", "Simulator",
                "Secure", "Exchange", "ExchangePosix", "CSystemd", "CBuildInfo", "CFileSync",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),

        // A gateway on an MQTT broker, over the connection library: publishes what centrals send and
        // acknowledges it to them only after the broker's PUBACK. The only module that links paho.
        .target(
            name: "MsgPipeMQTT",
            dependencies: [
                "MsgPipe", "Framing", "Transport", "CMQTTShim", "CPahoMQTT",
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strict),

        // The CLI's commands (argument parsing, output, exit codes over MsgPipe), and the two executables that
        // run them: the product, and the lab tool that adds probes and fault injection (never installed).
        .target(
            name: "MsgPipeCLI",
            dependencies: [
                "MsgPipe", "MsgPipeMQTT", "Simulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "msgpipe", dependencies: ["MsgPipeCLI"], swiftSettings: strict),
        .executableTarget(
            name: "msgpipe-lab",
            dependencies: [
                "MsgPipeCLI", "MsgPipe", "Framing", "GATT", "BLELink", "Transport", "Secure", "Exchange",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Helpers every test target shares (hex test vectors), one copy instead of one per target.
        .target(
            name: "TestSupport", dependencies: ["Framing", "Transport", "MsgPipeCore"], path: "Tests/TestSupport",
            swiftSettings: strict),
        .target(
            name: "GATTTestSupport", dependencies: ["GATT", "MemoryLinks"], path: "Tests/GATTTestSupport",
            swiftSettings: strict),

        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"], swiftSettings: strict),
        .testTarget(
            name: "FramingTests",
            dependencies: ["Framing", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "msgpipe", "msgpipe-lab", "MsgPipeCLI", "MsgPipe", "BLELink", "BlueZLink", "PaymentTerminal", "PaymentClient",
                "Central", "Peripheral", "Push", "TestSupport", "DocSnippets", "MemoryLinks",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        // The gateway against a real mosquitto on loopback (skipped without /usr/sbin/mosquitto).
        .testTarget(
            name: "MQTTTests",
            dependencies: ["MsgPipeMQTT", "MsgPipe", "BLELink", "Transport", "Secure", "msgpipe", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "MsgPipeTests",
            dependencies: [
                "MsgPipe", "MsgPipeCore", "GATT", "BLESocket", "BLELink", "Transport", "Secure", "Exchange", "MemoryLinks",
                "Simulator", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        // The connection library without a backend: a test backend over MemoryLinks, built against MsgPipeCore
        // alone (no BLELink, no Linux), and the check that MsgPipeCore stays that way.
        .testTarget(
            name: "MsgPipeCoreTests",
            dependencies: ["MsgPipeCore", "MemoryLinks", "Transport", "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "BackpressureTests",
            dependencies: ["Backpressure"],
            swiftSettings: strict),
        .testTarget(
            name: "TransportTests",
            dependencies: [
                "Transport", "Framing", "Backpressure", "MemoryLinks", "Simulator", "TestSupport", "BLELink",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SecureTests",
            dependencies: [
                "Secure", "Transport", "MemoryLinks", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict),
        // The pure Exchange module: envelopes, RequestServer with a Swift handler; no file, no process.
        .testTarget(
            name: "ExchangeTests",
            dependencies: ["Exchange", "Framing", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        // Exchange's OS side: the journal and its lock in a state directory, the command runner, key files.
        .testTarget(
            name: "ExchangePosixTests",
            dependencies: [
                "Exchange", "ExchangePosix", "Secure", "Transport", "MemoryLinks", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // The pure GATT layer's tests: over an in-memory ATTConnection pair, no socket, no libbluetooth.
        .testTarget(
            name: "GATTTests",
            dependencies: [
                "GATT", "Transport", "Backpressure", "MemoryLinks", "TestSupport", "GATTTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),
        .testTarget(
            name: "BLELinkTests",
            dependencies: [
                "GATT", "BLESocket", "BLELink", "Framing", "Transport", "MemoryLinks", "TestSupport", "GATTTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict),

        // The BlueZ D-Bus backend against a private dbus-daemon and a fake org.bluez (skipped without dbus-daemon).
        .testTarget(
            name: "BlueZTests",
            dependencies: [
                "BLESocket", "BLELink", "BlueZLink", "SDBus", "GATT", "Transport", "Backpressure", "MsgPipe", "msgpipe",
                "TestSupport"],
            swiftSettings: strict),

        // The lab's checks, run inside the lab VM by Scripts/lab-test.sh (skipped everywhere else).
        .testTarget(name: "LabTests", dependencies: ["Framing", "BLELink", "CBluetooth", "TestSupport"], swiftSettings: strict),

        // The Swift snippets of README.md, docs/ and the DocC catalogs, compiled as written (CLITests.DocsTests
        // checks that each ```swift block there matches one of these files).
        .target(
            name: "DocSnippets",
            dependencies: ["MsgPipe", "MsgPipeMQTT", "Secure", "Exchange", "Transport"],
            path: "Examples/Snippets", swiftSettings: strict),

        // Examples of the library API (built by `swift build`, so CI proves they compile).
        .executableTarget(
            name: "PaymentTerminal", dependencies: ["MsgPipe", "Secure", "Exchange"], path: "Examples/PaymentTerminal",
            swiftSettings: strict),
        .executableTarget(
            name: "PaymentClient", dependencies: ["MsgPipe", "Secure", "Exchange"], path: "Examples/PaymentClient",
            swiftSettings: strict),
        .executableTarget(name: "Central", dependencies: ["MsgPipe"], path: "Examples/Central", swiftSettings: strict),
        .executableTarget(
            name: "Peripheral", dependencies: ["MsgPipe"], path: "Examples/Peripheral", swiftSettings: strict),
        .executableTarget(name: "Push", dependencies: ["MsgPipe"], path: "Examples/Push", swiftSettings: strict),

        .executableTarget(
            name: "FramingBenchmarks",
            dependencies: ["Framing", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/FramingBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]),
        .executableTarget(
            name: "TransportBenchmarks",
            dependencies: ["Transport", "Simulator", "MemoryLinks", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/TransportBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]),
        .executableTarget(
            name: "GATTLinkBenchmarks",
            dependencies: ["GATT", "BLELink", "Transport", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/GATTLinkBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]),
        .executableTarget(
            name: "SecureBenchmarks",
            dependencies: ["Secure", .product(name: "Benchmark", package: "package-benchmark")],
            path: "Benchmarks/SecureBenchmarks",
            swiftSettings: strict,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]),
    ]
)

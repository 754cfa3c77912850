// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer targets, one per parser that reads a peer's or a disk's bytes, kept out of the main package so a
/// plain `swift build` never builds them. Scripts/fuzz.sh builds them all with `-sanitize=fuzzer,address
/// -DFUZZING`; without FUZZING each is a replay tool: `MsgPipeFuzzer FILE...` runs saved inputs (crash
/// reproducers) once. `TARGET --write-seeds DIR` writes the target's seeds (spec vectors) into DIR.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "msgpipe-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "msgpipe", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
    ],
    targets: [
        // The libFuzzer driver, the replay tool and the seed writer every target shares.
        .target(name: "FuzzSupport", swiftSettings: strict),
        // The ATT decoder and the GATT server.
        .executableTarget(
            name: "ATTFuzzer",
            dependencies: ["FuzzSupport", .product(name: "GATT", package: "msgpipe")],
            swiftSettings: strict),
        // The msgpipe packet decoder (packet, message header, control packet) and its reassembler.
        .executableTarget(
            name: "MsgPipeFuzzer",
            dependencies: ["FuzzSupport", .product(name: "Framing", package: "msgpipe")],
            swiftSettings: strict),
        // The stream deframer (packet boundaries on an L2CAP channel's byte stream).
        .executableTarget(
            name: "StreamFramesFuzzer",
            dependencies: ["FuzzSupport", .product(name: "Framing", package: "msgpipe")],
            swiftSettings: strict),
        // The legacy Start/End, EOM and lines decoders.
        .executableTarget(
            name: "TextFormatsFuzzer",
            dependencies: ["FuzzSupport", .product(name: "Framing", package: "msgpipe")],
            swiftSettings: strict),
        // Transport's receive path: control packets and a TransportEndpoint fed a peer's packets.
        .executableTarget(
            name: "TransportFuzzer",
            dependencies: [
                "FuzzSupport", .product(name: "Framing", package: "msgpipe"),
                .product(name: "Transport", package: "msgpipe"),
            ],
            swiftSettings: strict),
        // Secure's handshake messages and sealed records.
        .executableTarget(
            name: "SecureFuzzer",
            dependencies: [
                "FuzzSupport", .product(name: "Secure", package: "msgpipe"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // The authorized-keys file parser (module Secure).
        .executableTarget(
            name: "AuthorizedKeysFuzzer",
            dependencies: ["FuzzSupport", .product(name: "Secure", package: "msgpipe")],
            swiftSettings: strict),
        // Exchange's request and response envelopes, journal records, and the journal read from disk (ExchangePosix).
        .executableTarget(
            name: "ExchangeFuzzer",
            dependencies: [
                "FuzzSupport", .product(name: "Exchange", package: "msgpipe"),
                .product(name: "ExchangePosix", package: "msgpipe"),
            ],
            swiftSettings: strict),
        // The inbox's delivery journal read from disk (module MsgPipe).
        .executableTarget(
            name: "InboxFuzzer",
            dependencies: ["FuzzSupport", .product(name: "MsgPipe", package: "msgpipe")],
            swiftSettings: strict),
        // What BlueZLink reads from bluetoothd's D-Bus messages: DBusValue trees (built from the input, as sd-bus
        // would hand them over) into Device1 peers, UUIDs, addresses, device paths and MTUs.
        .executableTarget(
            name: "BlueZFuzzer",
            dependencies: [
                "FuzzSupport", .product(name: "BluetoothCore", package: "msgpipe"), .product(name: "BlueZLink", package: "msgpipe"),
                .product(name: "SDBus", package: "msgpipe"), .product(name: "GATT", package: "msgpipe"),
            ],
            swiftSettings: strict),
        // The bond store's file (BondFile, BondStore.load) and the mgmt key events it keeps (module BLELink).
        .executableTarget(
            name: "BondStoreFuzzer",
            dependencies: ["FuzzSupport", .product(name: "BLELink", package: "msgpipe")],
            swiftSettings: strict),
    ]
)

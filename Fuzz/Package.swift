// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer target for the ATT decoder and the GATT server, kept out of the main package so a plain
/// `swift build` never builds it. Scripts/fuzz.sh builds it with `-sanitize=fuzzer,address -DFUZZING`;
/// without FUZZING it is a replay tool: `ATTFuzzer FILE...` runs saved inputs (crash reproducers) once.
let package = Package(
    name: "msgpipe-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "msgpipe", path: "..")],
    targets: [
        .executableTarget(
            name: "ATTFuzzer",
            dependencies: [.product(name: "GATT", package: "msgpipe")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("InternalImportsByDefault")]),
    ]
)

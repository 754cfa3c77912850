import Foundation

/// A fresh empty directory under the system's temporary directory.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "msgpipe-exchange-\(UUID().uuidString)"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func lineCount(_ path: String) -> Int {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
}

import Crypto

/// SHA-256 of `bytes`, as the server records request digests.
func SHA256Digest(_ bytes: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: bytes)) }

import Glibc

/// The guest kernel's log from a point on, read from /dev/kmsg. A lab test's fixture opens one when the test
/// starts and, when the test fails, reads the oopses the kernel logged meanwhile: the lab's guest kernel (Linux
/// 6.1) now and then oopses when a Bluetooth socket is closed (docs/LAB.md), which kills the process in that
/// system call and fails the test for a reason that is not msgpipe's.
final class LabKernelLog {
    private let descriptor: Int32

    /// Starts at the log's end: later reads return only what the kernel logs from now on. Where /dev/kmsg cannot
    /// be read (not root, not Linux) every read returns nothing.
    init() {
        descriptor = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if descriptor >= 0 { lseek(descriptor, 0, SEEK_END) }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// The lines the kernel logged since `init` or the previous call, each as dmesg prints it ("[seconds] text").
    /// Lines the kernel overwrote before they were read are left out; a read never blocks.
    func newLines() -> [String] {
        guard descriptor >= 0 else { return [] }
        var lines: [String] = []
        // One read returns one record, at most about 1 KiB of text here (the kernel's limit is 8 KiB with its keys).
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                lines.append(Self.line(ofRecord: buffer[..<count]))
            } else if count < 0 && (errno == EPIPE || errno == EINTR) {
                continue  // EPIPE: records were overwritten; the next read returns the oldest one left
            } else {
                return lines  // EAGAIN: nothing more
            }
        }
    }

    /// A /dev/kmsg record ("PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;TEXT\n" and key lines) as dmesg prints it.
    static func line(ofRecord record: ArraySlice<UInt8>) -> String {
        let text = String(decoding: record, as: UTF8.self)
        guard let semicolon = text.firstIndex(of: ";") else { return text }
        let message = String(text[text.index(after: semicolon)...].prefix { $0 != "\n" })
        let fields = text[..<semicolon].split(separator: ",")
        guard fields.count >= 3, let micros = Int(fields[2]) else { return message }
        let seconds = String(micros / 1_000_000), fraction = String(micros % 1_000_000)
        return "[" + String(repeating: " ", count: max(0, 5 - seconds.count)) + seconds + "."
            + String(repeating: "0", count: 6 - fraction.count) + fraction + "] " + message
    }

    /// The lines that start an oops (or name the corruption that led to it).
    static let headlines = ["BUG:", "kernel BUG at", "Oops:", "general protection fault", "invalid opcode:", "list_del corruption",
        "list_add corruption"]
    /// The frames of a call trace kept per oops: enough to name the kernel functions, not the system call's path.
    static let framesKept = 6

    /// The lines of each oops among `lines` (dmesg's form): its headlines, the task it killed ("CPU: N PID: N Comm:
    /// NAME"), where (RIP), and the first `framesKept` functions of its call trace (frames marked "?", the kernel's
    /// guesses, left out). Empty when the kernel did not oops.
    static func oopses(in lines: [String]) -> [String] {
        var kept: [String] = []
        var inOops = false
        var frames: Int?  // inside a call trace: the frames kept so far
        for line in lines {
            let text = Self.text(of: line)
            if headlines.contains(where: { text.hasPrefix($0) }) {
                kept.append(line)
                inOops = true
                frames = nil
            } else if !inOops {
                continue
            } else if let framesSoFar = frames {
                if text.hasPrefix("?") || text == "<TASK>" || text == "<IRQ>" || text == "</IRQ>" { continue }
                guard text.contains("+0x"), framesSoFar < framesKept else {
                    inOops = false
                    frames = nil
                    continue
                }
                kept.append(line)
                frames = framesSoFar + 1
            } else if text.hasPrefix("Call Trace:") {
                kept.append(line)
                frames = 0
            } else if text.hasPrefix("RIP: ") || (text.hasPrefix("CPU: ") && text.contains(" Comm: ")) {
                kept.append(line)
            }
        }
        return kept
    }

    /// A line's text without dmesg's "[seconds] " and the leading spaces of a call trace's frames.
    private static func text(of line: String) -> Substring {
        var text = Substring(line)
        if text.hasPrefix("["), let end = text.firstIndex(of: "]") { text = text[text.index(after: end)...] }
        return text.drop { $0 == " " }
    }
}

import GATT
import Glibc

extension ATTError {
    /// The error for a failed system call: `operation` as a verb phrase ("connect to /tmp/a.sock"), the
    /// errno `code`, and its strerror text, so that the description reads "cannot connect to ...: No such file
    /// or directory".
    static func system(_ operation: String, errno code: Int32) -> ATTError {
        .io(operation: operation, errno: code, message: String(cString: strerror(code)))
    }
}

import GATT
import Glibc
import Testing
@testable import BLELink
@testable import BLESocket

struct SeqPacketSocketErrorTests {
    @Test func connectingToAMissingPathSaysSoAndKeepsTheErrno() throws {
        let path = "/tmp/msgpipe-missing-\(getpid()).sock"
        #expect {
            _ = try SeqPacketSocket.connect(path: path)
        } throws: { error in
            guard let error = error as? ATTError, case let .io(_, code, _) = error else { return false }
            return code == ENOENT && error.description == "cannot connect to \(path): No such file or directory"
        }
    }

    @Test func systemErrorsCarryTheStrerrorText() {
        let error = ATTError.system("listen on /run/x.sock", errno: EACCES)
        #expect(error == .io(operation: "listen on /run/x.sock", errno: EACCES, message: "Permission denied"))
        #expect(error.description == "cannot listen on /run/x.sock: Permission denied")
    }
}

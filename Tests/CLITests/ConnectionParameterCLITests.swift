import Testing

/// `--conn-interval`, `--conn-latency`, `--supervision-timeout` and `--phy` are checked before anything is
/// opened: each broken rule is a usage error (64) that names the rule.
@Suite("msgpipe connection parameter options")
struct ConnectionParameterCLITests {
    static let central = ["send", "--to", "AA:BB:CC:DD:EE:FF", "--backend", "kernel"]

    @Test("a value that breaks a rule exits 64 naming it", arguments: [
        (["--conn-interval", "5"], "outside 7.5 to 4000 ms"),
        (["--conn-interval", "4001.25"], "outside 7.5 to 4000 ms"),
        (["--conn-interval", "8"], "not a multiple of 1.25 ms"),
        (["--conn-interval", "30-15"], "minimum 30 ms is above the maximum 15 ms"),
        (["--conn-interval", "fast"], "is not MS or MIN-MAX"),
        (["--conn-latency", "500"], "not a whole number from 0 to 499"),
        (["--supervision-timeout", "50"], "outside 100 to 32000 ms"),
        (["--supervision-timeout", "105"], "not a multiple of 10 ms"),
        (["--conn-interval", "100", "--conn-latency", "4", "--supervision-timeout", "1000"], "must be longer than (1 + latency 4)"),
        (["--phy", "3m"], "is not 1m, 2m or coded"),
    ])
    func brokenRule(arguments: [String], rule: String) throws {
        for command in [Self.central + ["/dev/null"], ["listen", "--name", "gw"], ["serve", "--name", "gw", "--exec", "cat"]] {
            let result = try MsgPipeProcess.run(command + arguments)
            #expect(result.status == 64, "\(command + arguments): \(result.stderr)")
            #expect(result.stderr.contains(rule), "\(command + arguments): \(result.stderr)")
        }
    }

    @Test func theOptionsAreListedInHelp() throws {
        for command in ["send", "listen", "serve"] {
            let result = try MsgPipeProcess.run([command, "--help"])
            let help = String(decoding: result.stdout, as: UTF8.self) + result.stderr
            for option in ["--conn-interval", "--conn-latency", "--supervision-timeout", "--phy"] {
                #expect(help.contains(option), "\(command) --help lacks \(option)")
            }
        }
    }
}

extension ConnectionParameterCLITests {
    @Test func overAUnixSocketTheyAreAUsageErrorNotIgnored() throws {
        let result = try MsgPipeProcess.run(["send", "--link", "unix:/tmp/msgpipe-none.sock", "--conn-interval", "15", "/dev/null"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("apply to Bluetooth links"))
    }

    @Test("through --backend bluez they are a usage error with bluetoothd's remedy, in either role", arguments: [
        ["send", "--to", "AA:BB:CC:DD:EE:FF", "/dev/null"], ["listen", "--name", "msgpipe-params"],
        ["bench", "--to", "AA:BB:CC:DD:EE:FF"],
    ])
    func throughBluezTheyAreAUsageError(command: [String]) throws {
        // bench's --phy is the simulator's: the PHY preference is listen's and send's.
        let phy = command[0] == "bench" ? [] : ["--phy", "2m"]
        let result = try MsgPipeProcess.run(command + ["--backend", "bluez", "--conn-interval", "15"] + phy)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("MinConnectionInterval=12 MaxConnectionInterval=12"), "\(result.stderr)")
        #expect(result.stderr.contains("or use --backend kernel (with bluetoothd stopped)"), "\(result.stderr)")
        #expect(phy.isEmpty || result.stderr.contains("a PHY preference needs --backend kernel"), "\(result.stderr)")
    }
}

extension ConnectionParameterCLITests {
    @Test func benchTakesThemForARealLinkOnly() throws {
        let simulated = try MsgPipeProcess.run(["bench", "--link", "sim", "--conn-interval", "15"])
        #expect(simulated.status == 64, "\(simulated.stderr)")
        #expect(simulated.stderr.contains("the simulator takes --interval-ms"))
        let real = try MsgPipeProcess.run(["bench", "--to", "AA:BB:CC:DD:EE:FF", "--conn-interval", "15", "--conn-latency", "500"])
        #expect(real.status == 64, "\(real.stderr)")
        #expect(real.stderr.contains("not a whole number from 0 to 499"))
    }
}

/// `--bonds DIR` names a directory only the kernel backend uses: through bluetoothd it would be silently unused.
@Suite("msgpipe --bonds through bluetoothd")
struct BondsThroughBluetoothdCLITests {
    @Test("--backend bluez --bonds DIR is a usage error naming bluetoothd's bonds, in every command that takes it", arguments: [
        ["send", "--to", "AA:BB:CC:DD:EE:FF", "/dev/null"], ["listen", "--name", "msgpipe-bonds"],
        ["serve", "--name", "msgpipe-bonds", "--exec", "cat"], ["request", "--to", "AA:BB:CC:DD:EE:FF", "/dev/null"],
    ])
    func refused(command: [String]) throws {
        let result = try MsgPipeProcess.run(command + ["--backend", "bluez", "--bonds", "/tmp/msgpipe-bonds-none"])
        #expect(result.status == 64, "\(command): \(result.stderr)")
        #expect(result.stderr.contains("--bonds is for the kernel backend"), "\(result.stderr)")
        #expect(result.stderr.contains("use --backend kernel"), "\(result.stderr)")
    }
}

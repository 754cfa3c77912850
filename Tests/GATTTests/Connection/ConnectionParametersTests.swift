import GATT
import PropertyBased
import Testing

/// ``ConnectionParameters`` and ``ConnectionParameterRequest``: every rule of the Core specification's LE
/// connection parameters, the CLI's spellings, and exact unit conversions.
@Suite struct ConnectionParametersTests {
    @Test("interval text in milliseconds becomes 1.25 ms units exactly", arguments: [
        ("7.5", 6, 6), ("8.75", 7, 7), ("10", 8, 8), ("11.25", 9, 9), ("15-30", 12, 24), ("7.5-4000", 6, 3_200),
        ("4000", 3_200, 3_200), ("30.000", 24, 24), ("11.250-12.5", 9, 10), ("1000", 800, 800),
    ])
    func intervalParses(text: String, minimum: Int, maximum: Int) throws {
        let units = try ConnectionParameters.parseInterval(text)
        #expect(Int(units.minimum) == minimum)
        #expect(Int(units.maximum) == maximum)
    }

    @Test("a bad interval names the rule it breaks", arguments: [
        ("7", ConnectionParametersError.intervalOutOfRange("7")),
        ("5-10", .intervalOutOfRange("5")),
        ("4001.25", .intervalOutOfRange("4001.25")),
        ("0", .intervalOutOfRange("0")),
        ("8", .intervalNotInSteps("8")),
        ("7.6", .intervalNotInSteps("7.6")),
        ("11.2501", .intervalNotMilliseconds("11.2501")),
        ("30-15", .intervalMinimumAboveMaximum(minimum: "30", maximum: "15")),
        ("", .intervalNotMilliseconds("")),
        ("fast", .intervalNotMilliseconds("fast")),
        ("-15", .intervalNotMilliseconds("-15")),
        ("15-", .intervalNotMilliseconds("15-")),
        ("15-30-45", .intervalNotMilliseconds("15-30-45")),
        ("1e2", .intervalNotMilliseconds("1e2")),
        ("99999999999999999999", .intervalNotMilliseconds("99999999999999999999")),
    ])
    func badInterval(text: String, error: ConnectionParametersError) {
        #expect(throws: error) { try ConnectionParameters.parseInterval(text) }
    }

    @Test("error descriptions state the rule")
    func descriptions() {
        #expect(ConnectionParametersError.intervalOutOfRange("5").description == "connection interval 5 ms is outside 7.5 to 4000 ms")
        #expect(ConnectionParametersError.intervalNotInSteps("8").description.contains("not a multiple of 1.25 ms"))
        #expect(ConnectionParametersError.intervalMinimumAboveMaximum(minimum: "30", maximum: "15").description
            == "connection interval minimum 30 ms is above the maximum 15 ms")
        #expect(ConnectionParametersError.latencyOutOfRange("500").description.contains("0 to 499"))
        #expect(ConnectionParametersError.supervisionTimeoutOutOfRange("50").description.contains("100 to 32000 ms"))
        let short = ConnectionParametersError.supervisionTimeoutTooShort(timeout: "100", latency: 4, maximumInterval: "30", needed: 310)
        #expect(short.description == "supervision timeout 100 ms must be longer than (1 + latency 4) x maximum interval 30 ms x 2; use at least 310 ms")
        #expect(ConnectionParametersError.unknownPHY("3m").description == "PHY '3m' is not 1m, 2m or coded")
    }

    @Test("latency is a whole number from 0 to 499", arguments: ["0", "1", "499"])
    func latencyParses(text: String) throws {
        #expect(try ConnectionParameters.parseLatency(text) == UInt16(text))
    }

    @Test("latency outside 0 to 499 or not a number is refused", arguments: ["500", "-1", "", "1.5", "x", "65536", "٣"])
    func badLatency(text: String) {
        #expect(throws: ConnectionParametersError.latencyOutOfRange(text)) { try ConnectionParameters.parseLatency(text) }
    }

    @Test("supervision timeout is 100 to 32000 ms in 10 ms steps")
    func supervisionTimeout() throws {
        #expect(try ConnectionParameters.parseSupervisionTimeout("100") == 10)
        #expect(try ConnectionParameters.parseSupervisionTimeout("420") == 42)
        #expect(try ConnectionParameters.parseSupervisionTimeout("32000") == 3_200)
        #expect(throws: ConnectionParametersError.supervisionTimeoutOutOfRange("90")) { try ConnectionParameters.parseSupervisionTimeout("90") }
        #expect(throws: ConnectionParametersError.supervisionTimeoutOutOfRange("32010")) { try ConnectionParameters.parseSupervisionTimeout("32010") }
        #expect(throws: ConnectionParametersError.supervisionTimeoutNotInSteps("105")) { try ConnectionParameters.parseSupervisionTimeout("105") }
        for text in ["", "1.5", "2s", "-100", "9999999999"] {
            #expect(throws: ConnectionParametersError.supervisionTimeoutNotMilliseconds(text)) {
                try ConnectionParameters.parseSupervisionTimeout(text)
            }
        }
    }

    @Test("the timeout must be longer than (1 + latency) x maximum interval x 2")
    func timeoutRule() throws {
        // 30 ms, latency 4: (1 + 4) x 30 x 2 = 300 ms; 300 is not longer, 310 is.
        #expect(throws: ConnectionParametersError.supervisionTimeoutTooShort(timeout: "300", latency: 4, maximumInterval: "30", needed: 310)) {
            try ConnectionParameters(minimumInterval: 24, maximumInterval: 24, latency: 4, supervisionTimeout: 30)
        }
        let ok = try ConnectionParameters(minimumInterval: 24, maximumInterval: 24, latency: 4, supervisionTimeout: 31)
        #expect(ok.supervisionTimeoutDuration == .milliseconds(310))
        // 7.5 ms, latency 0: 15 ms; the 100 ms floor rules.
        #expect(ConnectionParameters.shortestSupervisionTimeout(latency: 0, maximumInterval: 6) == 10)
        // 4 s, latency 499: no timeout is long enough.
        #expect(throws: ConnectionParametersError.supervisionTimeoutTooShort(timeout: "32000", latency: 499, maximumInterval: "4000", needed: nil)) {
            try ConnectionParameters(minimumInterval: 3_200, maximumInterval: 3_200, latency: 499, supervisionTimeout: 3_200)
        }
    }

    @Test("the unit initializer checks each range and the order of the bounds")
    func unitRanges() throws {
        #expect(throws: ConnectionParametersError.intervalOutOfRange("6.25")) {
            try ConnectionParameters(minimumInterval: 5, maximumInterval: 6, latency: 0, supervisionTimeout: 100)
        }
        #expect(throws: ConnectionParametersError.intervalOutOfRange("4001.25")) {
            try ConnectionParameters(minimumInterval: 6, maximumInterval: 3_201, latency: 0, supervisionTimeout: 3_200)
        }
        #expect(throws: ConnectionParametersError.intervalMinimumAboveMaximum(minimum: "15", maximum: "7.5")) {
            try ConnectionParameters(minimumInterval: 12, maximumInterval: 6, latency: 0, supervisionTimeout: 100)
        }
        #expect(throws: ConnectionParametersError.latencyOutOfRange("500")) {
            try ConnectionParameters(minimumInterval: 6, maximumInterval: 6, latency: 500, supervisionTimeout: 3_200)
        }
        #expect(throws: ConnectionParametersError.supervisionTimeoutOutOfRange("90")) {
            try ConnectionParameters(minimumInterval: 6, maximumInterval: 6, latency: 0, supervisionTimeout: 9)
        }
        #expect(throws: ConnectionParametersError.supervisionTimeoutOutOfRange("32010")) {
            try ConnectionParameters(minimumInterval: 6, maximumInterval: 6, latency: 0, supervisionTimeout: 3_201)
        }
    }

    @Test("durations convert to units exactly, and back")
    func durations() throws {
        let parameters = try ConnectionParameters(
            interval: .microseconds(7_500) ... .milliseconds(15), latency: 2, supervisionTimeout: .seconds(2))
        #expect(parameters.minimumInterval == 6)
        #expect(parameters.maximumInterval == 12)
        #expect(parameters.latency == 2)
        #expect(parameters.supervisionTimeout == 200)
        #expect(parameters.interval == .microseconds(7_500) ... .milliseconds(15))
        #expect(parameters.supervisionTimeoutDuration == .seconds(2))
        #expect(parameters.description == "interval 7.5-15 ms, latency 2, supervision timeout 2000 ms")
        #expect(try ConnectionParameters.intervalUnits(of: .seconds(4)) == 3_200)
        #expect(throws: ConnectionParametersError.intervalNotInSteps("7.501")) { try ConnectionParameters.intervalUnits(of: .microseconds(7_501)) }
        #expect(throws: ConnectionParametersError.intervalNotInSteps("7.5")) { try ConnectionParameters.intervalUnits(of: .nanoseconds(7_500_001)) }
        #expect(throws: ConnectionParametersError.intervalOutOfRange("5")) { try ConnectionParameters.intervalUnits(of: .milliseconds(5)) }
        #expect(throws: ConnectionParametersError.intervalOutOfRange("-10")) { try ConnectionParameters.intervalUnits(of: .milliseconds(-10)) }
        #expect(throws: ConnectionParametersError.intervalOutOfRange("60000")) { try ConnectionParameters.intervalUnits(of: .seconds(60)) }
        #expect(throws: ConnectionParametersError.supervisionTimeoutNotInSteps("105")) {
            try ConnectionParameters.supervisionTimeoutUnits(of: .milliseconds(105))
        }
        #expect(throws: ConnectionParametersError.latencyOutOfRange("-1")) {
            try ConnectionParameters(interval: .milliseconds(15) ... .milliseconds(15), latency: -1, supervisionTimeout: .seconds(1))
        }
        #expect(ConnectionParameters.linuxDefault.description == "interval 30-50 ms, latency 0, supervision timeout 420 ms")
    }

    @Test("every interval in units formats to text that parses back to it, and to the same duration")
    func intervalRoundTrip() async {
        await propertyCheck(input: Gen.int(in: 6...3_200), Gen.int(in: 0...3_194)) { minimum, extra in
            let low = UInt16(minimum), high = UInt16(min(minimum + extra, 3_200))
            let text = ConnectionParameters.intervalText(minimum: low, maximum: high)
            let parsed = try? ConnectionParameters.parseInterval(text)
            #expect(parsed?.minimum == low && parsed?.maximum == high, "\(text)")
            #expect(ConnectionParameters.intervalText(minimum: parsed?.minimum ?? 0, maximum: parsed?.maximum ?? 0) == text)
            #expect((try? ConnectionParameters.intervalUnits(of: ConnectionParameters.intervalUnit * Int(low))) == low)
        }
    }

    @Test("any text either parses to values within the rules or throws a ConnectionParametersError, never traps")
    func arbitraryTextNeverTraps() async {
        let alphabet = Array("0123456789.-5 e٣")
        await propertyCheck(count: 500, input: Gen.int(in: 0 ... alphabet.count - 1).array(of: 0 ... 14)) { indices in
            let text = String(indices.map { alphabet[$0] })
            if let interval = try? ConnectionParameters.parseInterval(text) {
                #expect(ConnectionParameters.intervalUnits.contains(interval.minimum), "\(text)")
                #expect(interval.minimum <= interval.maximum && interval.maximum <= 3_200, "\(text)")
            }
            if let latency = try? ConnectionParameters.parseLatency(text) { #expect(latency <= 499, "\(text)") }
            if let timeout = try? ConnectionParameters.parseSupervisionTimeout(text) {
                #expect(ConnectionParameters.supervisionTimeoutUnits.contains(timeout), "\(text)")
            }
            if let request = try? ConnectionParameterRequest(interval: text, latency: text, supervisionTimeout: text, phy: nil) {
                #expect((try? request.resolved(over: .linuxDefault)) != nil, "\(text)")
            }
        }
    }

    @Test("a request keeps what was given and takes the rest from the defaults")
    func requestResolves() throws {
        let request = try ConnectionParameterRequest(interval: "7.5-15", latency: nil, supervisionTimeout: nil, phy: "2M")
        #expect(request.phy == .le2M)
        #expect(request.latency == nil)
        #expect(request.description == "interval 7.5-15 ms, phy 2m")
        let resolved = try request.resolved(over: .linuxDefault)
        #expect(resolved.description == "interval 7.5-15 ms, latency 0, supervision timeout 420 ms")
        // A latency that makes the default timeout too short: the shortest valid one is taken instead.
        let slow = try ConnectionParameterRequest(interval: "100", latency: "4", supervisionTimeout: nil, phy: nil)
        #expect(try slow.resolved(over: .linuxDefault).supervisionTimeout == 101)
        #expect(ConnectionParameterRequest().isEmpty)
        #expect(ConnectionParameterRequest().description == "system defaults")
        #expect(!ConnectionParameterRequest().hasConnectionParameters)
    }

    @Test("a request with a timeout too short for its interval and latency is refused when parsed")
    func requestRefused() {
        #expect(throws: ConnectionParametersError.supervisionTimeoutTooShort(timeout: "100", latency: 1, maximumInterval: "30", needed: 130)) {
            try ConnectionParameterRequest(interval: "15-30", latency: "1", supervisionTimeout: "100", phy: nil)
        }
        #expect(throws: ConnectionParametersError.unknownPHY("4m")) {
            try ConnectionParameterRequest(interval: nil, latency: nil, supervisionTimeout: nil, phy: "4m")
        }
        // Given only a timeout, the interval in force decides later.
        let request = try? ConnectionParameterRequest(interval: nil, latency: nil, supervisionTimeout: "100", phy: nil)
        #expect(throws: ConnectionParametersError.self) { try request?.resolved(over: ConnectionParameters(
            minimumInterval: 40, maximumInterval: 40, latency: 0, supervisionTimeout: 42)) ?? .linuxDefault }
    }
}

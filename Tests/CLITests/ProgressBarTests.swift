import Testing
@testable import MsgPipeCLI

@Suite("progress bar rendering")
struct ProgressBarTests {
    @Test("the bar fills with the share done and shows amount and rate")
    func rendersShareAmountAndRate() {
        let bar = ProgressBar(total: 1 << 20, width: 10)
        #expect(bar.render(done: 0, elapsed: .zero) == "[..........]   0%  0 B / 1.0 MiB  -")
        #expect(bar.render(done: 1 << 19, elapsed: .seconds(2)) == "[#####.....]  50%  512.0 KiB / 1.0 MiB  256.0 KiB/s")
        #expect(bar.render(done: 1 << 20, elapsed: .seconds(4)) == "[##########] 100%  1.0 MiB / 1.0 MiB  256.0 KiB/s")
    }

    @Test("more than the total (retransmissions, headers) shows as complete, never past 100 %")
    func clampsAtTheTotal() {
        let bar = ProgressBar(total: 1000, width: 4)
        #expect(bar.render(done: 1500, elapsed: .seconds(1)) == "[####] 100%  1000 B / 1000 B  1.5 KiB/s")
    }

    @Test("an unknown total (standard input) shows amount and rate only")
    func unknownTotal() {
        #expect(ProgressBar(total: 0).render(done: 3 << 20, elapsed: .seconds(3)) == "3.0 MiB  1.0 MiB/s")
    }

    @Test("amounts use binary units with one decimal", arguments: [
        (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"), (5 << 30, "5.0 GiB"),
    ])
    func amounts(bytes: Int, text: String) {
        #expect(ProgressBar.amount(bytes) == text)
    }
}

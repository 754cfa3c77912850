import Testing
import Backpressure

@Suite("Watermarks")
struct WatermarksTests {
    typealias Step = (level: Int, transition: Watermarks.Transition?, paused: Bool)

    static let scenarios: [(String, [Step])] = [
        ("rising to high pauses", [(3, nil, false), (8, .pause, true), (9, nil, true)]),
        ("inside the band keeps pausing", [(8, .pause, true), (5, nil, true), (3, nil, true), (7, nil, true)]),
        ("falling to low resumes", [(8, .pause, true), (2, .resume, false), (1, nil, false)]),
        ("inside the band after resume keeps running", [(8, .pause, true), (2, .resume, false), (7, nil, false)]),
        ("a full cycle repeats", [(9, .pause, true), (0, .resume, false), (8, .pause, true), (2, .resume, false)]),
    ]

    @Test(arguments: scenarios)
    func hysteresisBetweenHighAndLow(name: String, steps: [Step]) {
        var marks = Watermarks(high: 8, low: 2)
        for step in steps {
            #expect(marks.update(level: step.level) == step.transition, "\(name) at level \(step.level)")
            #expect(marks.isPaused == step.paused, "\(name) at level \(step.level)")
        }
    }

    @Test func lowIsKeptBelowHigh() {
        let marks = Watermarks(high: 4, low: 9)
        #expect(marks.low == 3)
    }
}

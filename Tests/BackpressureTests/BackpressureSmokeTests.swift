import Testing
@testable import Backpressure

@Test func moduleLinks() {
    #expect(String(describing: Backpressure.self).isEmpty == false)
}

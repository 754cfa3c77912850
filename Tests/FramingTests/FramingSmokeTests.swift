import Testing
@testable import Framing

@Test func moduleLinks() {
    #expect(String(describing: Framing.self).isEmpty == false)
}

import Testing
@testable import BLELink

@Test func moduleLinks() {
    #expect(String(describing: BLELink.self).isEmpty == false)
}

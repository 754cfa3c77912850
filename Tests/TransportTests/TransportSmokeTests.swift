import Testing
@testable import Transport

@Test func moduleLinks() {
    #expect(String(describing: LinkError.self).isEmpty == false)
}

import Testing
import Framing

/// No type in Framing may be named like the module: `Framing.X` must name the module's `X`.
@Test func moduleQualifiedNamesReachTheModulesTypes() {
    #expect(Framing.FrameFormat.allCases == FrameFormat.allCases)
}

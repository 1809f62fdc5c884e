import FinanceCore
import Foundation
import VaultCrypto

/// Helpers every test target shares, kept in one place rather than copied into each.

/// A new private folder under the system's temporary directory, removed (after `beforeRemoving`
/// has looked at it) when the last reference goes.
public final class TemporaryDirectory: @unchecked Sendable {
    public let url: URL
    private let beforeRemoving: (@Sendable (URL) -> Void)?

    public init(prefix: String = "coffer-test", beforeRemoving: (@Sendable (URL) -> Void)? = nil) {
        var template = Array((NSTemporaryDirectory() + "\(prefix)-XXXXXX").utf8CString)
        url = URL(fileURLWithPath: String(cString: mkdtemp(&template)!))
        self.beforeRemoving = beforeRemoving
    }

    deinit {
        beforeRemoving?(url)
        try? FileManager.default.removeItem(at: url)
    }

    public func path(_ name: String) -> URL { url.appendingPathComponent(name) }
}

/// A calendar date from `YYYY-MM-DD` written in a test.
public func date(_ text: String) -> CalendarDate { try! CalendarDate(parsing: text) }

/// Tests use the real interactive Argon2id profile, never a cheaper fake.
public let testParameters = KDFProfile.interactive.parameters

/// A reproducible random number generator (SplitMix64): a failing seed fails again.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

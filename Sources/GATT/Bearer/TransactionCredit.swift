import Backpressure

/// ATT allows one outstanding request (and one unconfirmed indication) per bearer: a window of one credit,
/// taken in arrival order.
extension CreditPool {
    /// A pool holding the one transaction a bearer may have outstanding.
    static func attTransaction() -> CreditPool { CreditPool(capacity: 1) }

    /// Waits for the transaction credit; throws ``ATTError/cancelled`` if cancelled while waiting.
    func acquireTransaction() async throws(ATTError) {
        do { try await acquire(1) } catch { throw .cancelled }
    }
}

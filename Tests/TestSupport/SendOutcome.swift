public import Transport

/// How `transport.send(body)` ends: "acknowledged", "retriesExhausted", "linkStalled", another error's description, or
/// "still waiting" once `patience` passed (the send is then cancelled).
public func sendOutcome(of transport: Transport, _ body: [UInt8], patience: Duration) async -> String {
    await withTaskGroup(of: String?.self) { group in
        group.addTask {
            do {
                try await transport.send(body)
                return "acknowledged"
            } catch let error as TransportError {
                if case .retriesExhausted = error { return "retriesExhausted" }
                if case .linkStalled = error { return "linkStalled" }
                return "\(error)"
            } catch {
                return "\(error)"
            }
        }
        group.addTask {
            try? await Task.sleep(for: patience)
            return Task.isCancelled ? nil : "still waiting"
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first ?? "none"
    }
}

/// How evenly several links shared the air: Jain's fairness index of their goodputs, and the largest
/// deviation of one link's goodput from the mean.
public struct LinkFairness: Sendable, Equatable {
    /// (sum x)^2 / (n x sum x^2): 1 when every link got the same, 1/n when one link got everything;
    /// 1 for one link, and 0 when no link moved a byte.
    public let jainIndex: Double
    /// max |x - mean| / mean x 100 over the links; 0 for one link or when no link moved a byte.
    public let largestDeviationPercent: Double

    /// The fairness of `goodputs` (one value per link, any unit).
    public init(goodputs: [Double]) {
        let sum = goodputs.reduce(0, +)
        let squares = goodputs.reduce(0) { $0 + $1 * $1 }
        guard !goodputs.isEmpty, sum > 0, squares > 0 else {
            jainIndex = 0
            largestDeviationPercent = 0
            return
        }
        jainIndex = sum * sum / (Double(goodputs.count) * squares)
        let mean = sum / Double(goodputs.count)
        largestDeviationPercent = goodputs.map { abs($0 - mean) }.max().map { $0 / mean * 100 } ?? 0
    }

    /// The fairness of the links' goodputs.
    public init(_ reports: [TransferReport]) { self.init(goodputs: reports.map(\.goodputKbps)) }
}

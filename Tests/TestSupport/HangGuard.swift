/// A deadline that only stops a hang and never judges speed. The suite runs its tests at once on a busy
/// two-core machine, where an exchange that takes 50 ms alone has waited 30 s for its turn. A test whose
/// subject is time uses a modelled clock or compares ratios instead.
public let hangGuard: Duration = .seconds(120)

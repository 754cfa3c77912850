import ArgumentParser

/// Which GATT role a command takes: the peripheral (GATT server: listens on the socket or advertises) or the
/// central (GATT client: connects). Independent of the direction of the messages: `send` and `listen` each
/// work in both roles.
enum LinkRole: String, ExpressibleByArgument, CaseIterable, Sendable {
    case peripheral
    case central
}

extension LinkOptions {
    /// The role: `--to` makes this side the central and `--name` the peripheral; otherwise `--role`
    /// (`explicit`), else `standard`. A `--role` that contradicts `--to`/`--name`, or both given, is a usage error.
    func role(_ explicit: LinkRole?, default standard: LinkRole) throws(ValidationError) -> LinkRole {
        switch (bluetooth.to, bluetooth.name) {
        case (_?, _?):
            throw ValidationError("--to (be the central) and --name (be the peripheral) exclude each other")
        case (_?, nil):
            if explicit == .peripheral { throw ValidationError("--to makes this side the central: not with --role peripheral") }
            return .central
        case (nil, _?):
            if explicit == .central { throw ValidationError("--name makes this side the peripheral: not with --role central") }
            return .peripheral
        case (nil, nil):
            return explicit ?? standard
        }
    }
}

/// An interface a ``DBusConnection`` exports on an object: methods and read-only properties, served through
/// an sd-bus vtable (Introspect, Properties.Get/GetAll and the object manager's GetManagedObjects come with
/// it).
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]

    public init(name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
    }
}

/// One exported method. sd-bus checks the input signature before the handler runs (InvalidArgs otherwise).
public struct DBusMethod: Sendable {
    /// Answers a call on the bus thread: the reply's values now, or nil to answer later through
    /// ``DBusMethodCall/reply(_:)`` / ``DBusMethodCall/fail(_:)``. A thrown error is the error reply.
    public typealias Handler = @Sendable (DBusMethodCall) throws(DBusError) -> [DBusValue]?

    public var name: String
    public var inputSignature: String
    public var outputSignature: String
    public var handler: Handler

    public init(_ name: String, input: String = "", output: String = "", handler: @escaping Handler) {
        self.name = name
        inputSignature = input
        outputSignature = output
        self.handler = handler
    }
}

/// One exported read-only property; its value is asked for on the bus thread at every Get/GetAll.
public struct DBusProperty: Sendable {
    public var name: String
    public var signature: String
    /// The property changes and this side emits PropertiesChanged for it (otherwise it is constant).
    public var emitsChange: Bool
    public var value: @Sendable () -> DBusValue

    public init(_ name: String, signature: String, emitsChange: Bool = false, value: @escaping @Sendable () -> DBusValue) {
        self.name = name
        self.signature = signature
        self.emitsChange = emitsChange
        self.value = value
    }

    /// A constant property.
    public init(_ name: String, _ constant: DBusValue) {
        self.init(name, signature: constant.signature) { constant }
    }
}

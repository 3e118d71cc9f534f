/// The objects a connection exports: their interfaces and the current values
/// of their properties, the object-manager roots, and what introspection and
/// `GetManagedObjects` report. Pure bookkeeping; the connection does the I/O.
struct DBusObjectTree: Sendable {
  /// One exported interface with its property values.
  struct Entry: Sendable {
    var interface: DBusInterface
    var values: [String: DBusValue]
  }

  static let propertiesInterface = "org.freedesktop.DBus.Properties"
  static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
  static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
  static let peerInterface = "org.freedesktop.DBus.Peer"

  private(set) var objects: [ObjectPath: [String: Entry]] = [:]
  private(set) var objectManagers: Set<ObjectPath> = []

  func isExported(_ path: ObjectPath) -> Bool { objects[path] != nil }

  mutating func add(_ path: ObjectPath, interfaces: [DBusInterface]) throws(DBusError) {
    guard objects[path] == nil else {
      throw DBusError(name: DBusError.Name.objectPathInUse, message: "an object is already exported at \(path)")
    }
    var entries: [String: Entry] = [:]
    for interface in interfaces {
      guard entries[interface.name] == nil else {
        throw .invalidArgs("interface \(interface.name) given twice for \(path)")
      }
      var values: [String: DBusValue] = [:]
      for property in interface.properties { values[property.name] = property.initialValue }
      entries[interface.name] = Entry(interface: interface, values: values)
    }
    objects[path] = entries
  }

  @discardableResult
  mutating func remove(_ path: ObjectPath) -> [String]? {
    objects.removeValue(forKey: path).map { Array($0.keys).sorted() }
  }

  mutating func addObjectManager(_ path: ObjectPath) { objectManagers.insert(path) }

  /// The object-manager root that announces `path`, if any (the nearest ancestor).
  func objectManager(announcing path: ObjectPath) -> ObjectPath? {
    objectManagers.filter { path.isDescendant(of: $0) }.max { $0.rawValue.count < $1.rawValue.count }
  }

  func entry(_ path: ObjectPath, _ interface: String) -> Entry? { objects[path]?[interface] }

  /// Finds the method a call names; `interface` may be absent in a call.
  func method(at path: ObjectPath, interface: String?, member: String) -> DBusMethod? {
    guard let entries = objects[path] else { return nil }
    if let interface { return entries[interface]?.interface.method(named: member) }
    return entries.keys.sorted().lazy.compactMap { entries[$0]?.interface.method(named: member) }.first
  }

  /// Stores property values after checking they exist and keep their type.
  /// Returns the changed values of properties that announce changes.
  mutating func update(
    _ path: ObjectPath, _ interface: String, _ changes: [String: DBusValue]
  ) throws(DBusError) -> [String: DBusValue] {
    guard var entry = objects[path]?[interface] else {
      throw DBusError(name: DBusError.Name.unknownInterface, message: "no interface \(interface) at \(path)")
    }
    var announced: [String: DBusValue] = [:]
    for (name, value) in changes {
      guard let property = entry.interface.property(named: name) else {
        throw DBusError(name: DBusError.Name.unknownProperty, message: "no property \(interface).\(name) at \(path)")
      }
      guard value.type == property.type else {
        throw .invalidArgs("property \(interface).\(name) has type \(property.type), not \(value.type)")
      }
      try value.validate()
      entry.values[name] = value
      if property.emitsChanged { announced[name] = value }
    }
    objects[path]?[interface] = entry
    return announced
  }

  /// `a{sa{sv}}` of one object: every interface with its properties.
  func interfacesAndProperties(_ path: ObjectPath) -> DBusValue {
    let entries = objects[path] ?? [:]
    return .dictionary(
      key: .string, value: .dictionary(key: .string, value: .variant),
      entries.keys.sorted().map { name in
        DBusDictionaryEntry(.string(name), .properties(entries[name]!.values))
      })
  }

  /// `a{oa{sa{sv}}}`: every object strictly below `root`.
  func managedObjects(below root: ObjectPath) -> DBusValue {
    let paths = objects.keys.filter { $0.isDescendant(of: root) }.sorted()
    return .dictionary(
      key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
      paths.map { DBusDictionaryEntry(.objectPath($0), interfacesAndProperties($0)) })
  }

  /// Whether anything is exported at or below `path` (so it can be introspected).
  func hasNode(_ path: ObjectPath) -> Bool {
    objects[path] != nil || objectManagers.contains(path) || objects.keys.contains { $0.isDescendant(of: path) }
      || objectManagers.contains { $0.isDescendant(of: path) }
  }

  /// The introspection XML of the node at `path`.
  func introspection(_ path: ObjectPath) -> String {
    var xml = """
      <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
       "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
      <node>
       <interface name="\(Self.introspectableInterface)">
        <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
       </interface>
       <interface name="\(Self.peerInterface)">
        <method name="Ping"/>
        <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
       </interface>

      """
    let entries = objects[path] ?? [:]
    if !entries.isEmpty {
      xml += """
         <interface name="\(Self.propertiesInterface)">
          <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
          <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
          <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
          <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
         </interface>

        """
    }
    if objectManagers.contains(path) {
      xml += """
         <interface name="\(Self.objectManagerInterface)">
          <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
          <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
          <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
         </interface>

        """
    }
    for name in entries.keys.sorted() {
      let interface = entries[name]!.interface
      xml += " <interface name=\"\(name)\">\n"
      for method in interface.methods {
        xml += "  <method name=\"\(method.name)\">"
        for type in method.input.types { xml += "<arg type=\"\(xmlEscaped(type.signature))\" direction=\"in\"/>" }
        for type in method.output.types { xml += "<arg type=\"\(xmlEscaped(type.signature))\" direction=\"out\"/>" }
        xml += "</method>\n"
      }
      for property in interface.properties {
        xml +=
          "  <property name=\"\(property.name)\" type=\"\(xmlEscaped(property.type.signature))\" access=\"\(property.access.rawValue)\"/>\n"
      }
      for signal in interface.signals {
        xml += "  <signal name=\"\(signal.name)\">"
        for type in signal.arguments.types { xml += "<arg type=\"\(xmlEscaped(type.signature))\"/>" }
        xml += "</signal>\n"
      }
      xml += " </interface>\n"
    }
    for child in children(of: path) { xml += " <node name=\"\(child)\"/>\n" }
    return xml + "</node>\n"
  }

  /// The names of the direct children of `path` that lead to exported objects.
  func children(of path: ObjectPath) -> [String] {
    let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
    var names = Set<String>()
    for candidate in Array(objects.keys) + Array(objectManagers) where candidate.isDescendant(of: path) {
      let rest = candidate.rawValue.dropFirst(prefix.count)
      if let first = rest.split(separator: "/").first { names.insert(String(first)) }
    }
    return names.sorted()
  }

  private func xmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
  }
}

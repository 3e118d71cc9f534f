extension DBusConnection {
  /// Exports an object with its interfaces. Under an object manager root
  /// (``exportObjectManager(at:)``), `InterfacesAdded` is emitted.
  public func export(_ path: ObjectPath, interfaces: [DBusInterface]) throws(DBusError) {
    guard isOpen else { throw DBusError.disconnected() }
    try tree.add(path, interfaces: interfaces)
    if let root = tree.objectManager(announcing: path) {
      try emit(
        path: root, interface: DBusObjectTree.objectManagerInterface, member: "InterfacesAdded",
        arguments: [.objectPath(path), tree.interfacesAndProperties(path)])
    }
  }

  /// Removes an exported object; `InterfacesRemoved` is emitted under an
  /// object manager root. Removing a path that is not exported does nothing.
  public func unexport(_ path: ObjectPath) throws(DBusError) {
    guard let interfaces = tree.remove(path) else { return }
    if isOpen, let root = tree.objectManager(announcing: path) {
      try emit(
        path: root, interface: DBusObjectTree.objectManagerInterface, member: "InterfacesRemoved",
        arguments: [.objectPath(path), .strings(interfaces)])
    }
  }

  /// Implements `org.freedesktop.DBus.ObjectManager` at `root`:
  /// `GetManagedObjects` returns every exported object below it.
  public func exportObjectManager(at root: ObjectPath) {
    tree.addObjectManager(root)
  }

  /// Changes property values of an exported object and emits one
  /// `PropertiesChanged` for those that announce changes.
  public func updateProperties(
    at path: ObjectPath, interface: String, _ changes: [String: DBusValue], invalidated: [String] = []
  ) throws(DBusError) {
    let announced = try tree.update(path, interface, changes)
    guard !announced.isEmpty || !invalidated.isEmpty else { return }
    try emit(
      path: path, interface: DBusObjectTree.propertiesInterface, member: "PropertiesChanged",
      arguments: [.string(interface), .properties(announced), .strings(invalidated)])
  }

  /// The current value of an exported property.
  public func propertyValue(at path: ObjectPath, interface: String, name: String) -> DBusValue? {
    tree.entry(path, interface)?.values[name]
  }
}

@_exported import GATT
@_exported import Scenario

/// Every device model this build of Doppel has, by the names scenarios and
/// the command line use. Adding a device adds one line here.
public enum DeviceCatalog {
  public static let bindings: [any DeviceBinding.Type] = [
    BlendMicroBinding.self,
    E4Binding.self,
    ActiGraphLinkBinding.self,
    EmStatPicoBinding.self,
    MuseBinding.self,
    GenericBinding.self,
  ]

  /// What scenarios may say about each model, with the characteristics of
  /// its profile (built once with default settings).
  public static let descriptions: [DeviceDescription] = bindings.map { type in
    var description = type.description
    if let binding = try? makeBinding(type, device: defaultDevice(type)) {
      description.characteristics = binding.model.profile.characteristicKeys
    }
    return description
  }

  /// The models' names, in catalog order.
  public static var models: [String] { descriptions.map(\.model) }

  /// A parser that knows every model here.
  public static var parser: ScenarioParser { ScenarioParser(models: descriptions) }

  /// The binding of `model`, or `nil` when there is no such model.
  public static func binding(for model: String) -> (any DeviceBinding.Type)? {
    bindings.first { $0.description.model == model }
  }

  /// One device of `model` with `settings` and `client` settings (defaults
  /// filled in), built as a scenario's device entry would be: for commands
  /// that host or watch a single device without a scenario file.
  ///
  /// - Parameter seed: seeds the device's random sources, as a scenario's `seed` does.
  public static func makeBinding(
    model: String, id: String = "device", name: String? = nil, serial: String? = nil, adapter: String? = nil,
    settings: [String: SettingValue] = [:], client: [String: SettingValue] = [:], seed: UInt64 = 1,
    directory: String = "."
  ) throws(ScenarioError) -> any DeviceBinding {
    guard let type = binding(for: model) else {
      throw ScenarioError(
        .unknownModel, file: "<command line>", line: 0, column: 0, "unknown device model '\(model)'",
        expected: "one of " + models.joined(separator: ", "),
        suggestion: ScenarioParser.closest(to: model, in: models).map { "did you mean '\($0)'?" })
    }
    let description = type.description
    let spec = DeviceSpec(
      id: id, model: model, name: name, serial: serial, adapter: adapter,
      settings: description.settings.withDefaults(settings),
      client: description.clientSettings.withDefaults(type.watchSettings.merging(client) { $1 }),
      location: SourceLocation(file: "<command line>", line: 0, column: 0))
    return try makeBinding(type, device: spec, seed: seed, directory: directory)
  }

  private static func makeBinding(
    _ type: any DeviceBinding.Type, device: DeviceSpec, seed: UInt64 = 1, directory: String = "."
  ) throws(ScenarioError) -> any DeviceBinding {
    try type.init(device: device, signals: SignalFactory(seed: seed, directory: directory))
  }

  private static func defaultDevice(_ type: any DeviceBinding.Type) -> DeviceSpec {
    let description = type.description
    return DeviceSpec(
      id: "device", model: description.model, settings: description.settings.withDefaults([:]),
      client: description.clientSettings.withDefaults([:]))
  }
}

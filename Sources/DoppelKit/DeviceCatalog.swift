import Scenario

/// Every device model this build of Doppel has, by the names scenarios and
/// the command line use.
public enum DeviceCatalog {
  public static let bindings: [any DeviceBinding.Type] = [
    BlendMicroBinding.self,
    E4Binding.self,
    ActiGraphLinkBinding.self,
    EmStatPicoBinding.self,
  ]

  public static var descriptions: [DeviceDescription] { bindings.map { $0.description } }

  /// A parser that knows every model here.
  public static var parser: ScenarioParser { ScenarioParser(models: descriptions) }
}

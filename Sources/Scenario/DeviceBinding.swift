import GATT
import Signals

/// Ties a device model and its client stack to scenarios: builds the model
/// from a scenario's device entry, applies the model's own timeline actions,
/// and runs the client in end-to-end runs, reporting what it sees.
///
/// One type per device model; `doppel` and the tests list them in a catalog.
public protocol DeviceBinding: Sendable {
  /// What scenarios may say about this model.
  static var description: DeviceDescription { get }

  /// Client settings `doppel watch` uses unless told otherwise, for a
  /// client that shows nothing live by default (a monitor that streams raw
  /// data only when asked). Empty for most models.
  static var watchSettings: [String: SettingValue] { get }

  /// Builds the device for `device` (settings and streams already checked
  /// against `description`), taking its streams' sources from `signals`.
  /// Throws when a source cannot be made (a recording that cannot be read).
  init(device: DeviceSpec, signals: SignalFactory) throws(ScenarioError)

  /// The device entry it was built from.
  var device: DeviceSpec { get }

  /// The model to host.
  var model: any PeripheralModel { get }

  /// Replaces what `stream` carries, from now on.
  func setSource(_ source: any SignalSource, for stream: String) async

  /// The sample rate of `stream` in Hz, for sources that need one (an ECG).
  func sampleRate(of stream: String) -> Double

  /// Applies a model-specific timeline action (`tag`, `battery`, …) and
  /// returns what else must happen at the hosting level as a consequence
  /// (a device switched off stops advertising: `[.stopAdvertising]`).
  func perform(_ action: String, arguments: [String: SettingValue]) async throws -> [ScenarioAction]

  /// Runs the device's client stack over `context.link` until the task is
  /// cancelled: find the device, connect, subscribe, and report to
  /// `context.observer` under `device.id` (samples, events, metrics, errors).
  /// Reconnects after a disconnect, as the vendor's app does, unless the
  /// client settings say not to (see ``ClientSession``).
  func runClient(_ context: ClientContext) async
}

extension DeviceBinding {
  public static var watchSettings: [String: SettingValue] { [:] }
}

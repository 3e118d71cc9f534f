/// The prediction names `startPredictionSession(_:)` takes, and the keys
/// `onValueChanged(key:value:)` reports.
///
/// The document names the streams (focus, enjoyment, flow, sleep, eye
/// blinks, heart rate, heart rate variability) but not the constants'
/// spelling; these names are this project's.
public enum ArctopSDKPredictions {
  /// Focus, enjoyment, flow (0–100, neutral 50) and blinks (0 or 1).
  public static let zone = "zone"
  /// Sleep detection (0 awake, 1 asleep).
  public static let sleep = "sleep"
  /// Every prediction name.
  public static let all = [zone, sleep]

  /// The value keys.
  public static let focus = "focus"
  public static let enjoyment = "enjoyment"
  public static let flow = "flow"
  public static let sleepDetection = "sleep"
  public static let blink = "blink"
}

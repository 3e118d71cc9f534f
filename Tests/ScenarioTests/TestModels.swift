import Scenario

/// Device models shaped like Doppel's own (the parser's tests do not depend on
/// DoppelKit): a Blend Micro with an ECG stream and a heart-rate metric, an
/// E4 with several streams and its own actions, and an EmStat Pico with a
/// setting of every kind and no metrics or events.
enum TestModels {
  static let blendMicro = DeviceDescription(
    model: "blend-micro",
    summary: "an ECG board",
    settings: [
      SettingSpec("sample-rate", .number(1...1000), default: .number(100), help: "ECG samples per second"),
      SettingSpec("heart-rate", .number(20...250), default: .number(72), help: "bpm"),
    ],
    streams: [StreamSpec("ecg", unit: "mV", help: "the ECG")],
    clientSettings: [
      SettingSpec("connect-timeout", .duration, default: .duration(.seconds(60)), help: "how long to connect"),
      SettingSpec("reconnect", .flag, default: .flag(true), help: "connect again"),
    ],
    metrics: ["heart-rate"],
    events: ["arrhythmia"])

  static let e4 = DeviceDescription(
    model: "e4",
    summary: "a wristband",
    settings: [
      SettingSpec("battery", .number(0...1), default: .number(1), help: "battery level at the start"),
      SettingSpec("ibi-warm-up", .duration, default: .duration(.seconds(20)), help: "streaming before the first IBI"),
    ],
    streams: [
      StreamSpec("bvp", unit: "BVP units", help: "blood volume pulse"),
      StreamSpec("eda", unit: "µS", help: "skin conductance"),
      StreamSpec("temperature", unit: "°C", help: "skin temperature"),
      StreamSpec("acc.x", unit: "g", help: "acceleration along x"),
      StreamSpec("acc.y", unit: "g", help: "acceleration along y"),
      StreamSpec("acc.z", unit: "g", help: "acceleration along z"),
    ],
    actions: [
      ActionSpec("tag", help: "press the button"),
      ActionSpec("battery", parameters: [SettingSpec("level", .number(0...1), help: "the new level")], help: "battery"),
      ActionSpec("power-off", help: "switch it off"),
    ],
    clientSettings: [
      SettingSpec("authentication", .choice(["accept", "refuse"]), default: .text("accept"), help: "API key answer")
    ],
    metrics: ["heart-rate", "battery"],
    events: ["tag", "ibi", "battery"],
    characteristics: ["bvp", "acceleration", "eda", "command"],
    firmwareEvents: ["start-streaming", "stop-streaming"])

  static let emstatPico = DeviceDescription(
    model: "emstat-pico",
    summary: "a potentiostat",
    settings: [
      SettingSpec("technique", .choice(["cv", "ca", "swv"]), default: .text("cv"), help: "the measurement"),
      SettingSpec("cycles", .integer(1...100), default: .integer(1), help: "how many scans"),
      SettingSpec("firmware", .text, help: "the version it reports"),
      SettingSpec("auto-start", .flag, default: .flag(false), help: "measure without being asked"),
      SettingSpec("interval", .duration, help: "time between measurements"),
    ],
    streams: [StreamSpec("current", unit: "µA", help: "the measured current")],
    actions: [
      ActionSpec(
        "press", parameters: [SettingSpec("times", .integer(1...5), default: .integer(1), help: "presses")],
        help: "press the button")
    ])

  static let parser = ScenarioParser(models: [blendMicro, e4, emstatPico])
}

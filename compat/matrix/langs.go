package matrix

// The clients in other languages, each an adapter program under clients/
// that Process runs (scripts/matrix-clients.sh installs and builds them).
var (
	KafkaClients = newProcess("kafka-clients", "clients/java", "target/classes/fakekafka/matrix/Adapter.class", "java",
		// C1 only and the serial collector: each operation is a short-lived
		// JVM, so start-up matters more than peak speed.
		"java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss512k", "-cp", "target/classes:target/lib/*", "fakekafka.matrix.Adapter")
	ConfluentPython = newProcess("confluent-kafka-python", "clients/python", ".venv/.installed", "python", ".venv/bin/python", "confluent_kafka_adapter.py")
	KafkaPython     = newProcess("kafka-python", "clients/python", ".venv/.installed", "python", ".venv/bin/python", "kafka_python_adapter.py")
	AIOKafka        = newProcess("aiokafka", "clients/python", ".venv/.installed", "python", ".venv/bin/python", "aiokafka_adapter.py")
	KafkaJS         = newProcess("kafkajs", "clients/js", "node_modules/.installed", "js", "node", "kafkajs.js")
	ConfluentJS     = newProcess("confluent-kafka-javascript", "clients/js", "node_modules/.installed", "js", "node", "confluent.js")
	RustRdkafka     = newProcess("rust-rdkafka", "clients/rust", "target/release/matrix-rdkafka", "rust", "target/release/matrix-rdkafka")
)

// otherLanguages are the Process clients, in table order.
func otherLanguages() []Client {
	return []Client{KafkaClients, ConfluentPython, KafkaPython, AIOKafka, KafkaJS, ConfluentJS, RustRdkafka}
}

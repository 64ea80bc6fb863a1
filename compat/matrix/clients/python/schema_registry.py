"""confluent-kafka's schema registry client and Avro serdes against
fakekafka's registry, for compat/matrix's TestSchemaRegistryClients.

    schema_registry.py avro

Its first line of input is the matrix's settings (bootstrap, topic,
registryUrl); it answers JSON lines: "produced" (index, id: the schema id in
the record's bytes), "refused" (error with the registry's status and code),
"decoded" (reader: "v1" or "v2", index, decoded: the value).
docs/schema-registry.md shows the part between the markers as it is.
"""

from adapter import emit, error, run


def describe(e):
    """A SchemaRegistryError as the protocol's error, with the registry's
    HTTP status and error_code."""
    err = error(type(e).__name__, str(e))
    err["status"] = getattr(e, "http_status_code", 0)
    err["code"] = getattr(e, "error_code", 0)
    return err


def version(cfg):
    import confluent_kafka

    emit("version", version=confluent_kafka.__version__)


# example:sr-python:start
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

USER_V1 = """{"type": "record", "name": "User", "namespace": "example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}"""
# Adds a field with a default: BACKWARD compatible.
USER_V2 = """{"type": "record", "name": "User", "namespace": "example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"},
    {"name": "email", "type": "string", "default": "unknown"}]}"""
# age becomes a string: incompatible.
USER_V3 = """{"type": "record", "name": "User", "namespace": "example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "string"}]}"""


def avro(cfg):
    registry = SchemaRegistryClient({"url": cfg["registryUrl"]})
    topic = cfg["topic"]
    ctx = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": cfg["bootstrap"]})
    users = [(USER_V1, {"name": "ada", "age": 36}),
             (USER_V2, {"name": "alan", "age": 41, "email": "alan@example.com"})]
    for i, (schema, user) in enumerate(users):
        # The serialiser registers its schema as topic-value: version 1, then 2.
        value = AvroSerializer(registry, schema)(user, ctx)
        producer.produce(topic, value=value, partition=0)
        emit("produced", index=i, id=int.from_bytes(value[1:5], "big"))
    producer.flush(10)

    try:
        AvroSerializer(registry, USER_V3)({"name": "grace", "age": "old"}, ctx)
        emit("fatal", error=error("accepted", "an incompatible schema was registered"))
    except SchemaRegistryError as e:  # e.http_status_code == 409, e.error_code == 409
        emit("refused", error=describe(e))

    consumer = Consumer({"bootstrap.servers": cfg["bootstrap"], "group.id": "readers"})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    values = []
    while len(values) < len(users):
        m = consumer.poll(10)
        if m is None or m.error():
            raise RuntimeError("consume: %s" % (m.error() if m else "no record in 10 s"))
        values.append(m.value())
    consumer.close()

    # Readers on each version: the first record gets the default email,
    # the second is read without it.
    for reader, schema in (("v2", USER_V2), ("v1", USER_V1)):
        deserialize = AvroDeserializer(registry, schema)
        for i, value in enumerate(values):
            emit("decoded", reader=reader, index=i, decoded=deserialize(value, ctx))
# example:sr-python:end


if __name__ == "__main__":
    run({"version": version, "avro": avro})

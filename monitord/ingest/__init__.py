"""``monitord ingest``: Stampede events from RabbitMQ into one central Stampede database,
exactly once for monitord producers (docs/ingest.md).  Beside the service in the layers: it
uses the sinks (the SQL loader, the AMQP stream headers), never the daemon or the service."""

# deploy/prometheus/prometheus.yml under deploy/compose.host.yml: the same jobs and rules, each
# target rewritten from its compose service name and port to the override's loopback port (the
# port plan at the top of compose.host.yml). The publisher's DNS discovery becomes the two
# publishers' metrics ports (no Docker DNS on the host's network). deploy/prometheus.test.ts checks
# the rewrite, deploy/containers.test.ts that Prometheus scrapes every one of them, up.
s/"gateway-a:4000"/"127.0.0.1:14000"/
s/"gateway-b:4000"/"127.0.0.1:14010"/
s/"networks:4001"/"127.0.0.1:14001"/
s/"results:4002"/"127.0.0.1:14002"/
s/"history:4003"/"127.0.0.1:14003"/
s/"realtime-a:4100"/"127.0.0.1:14100"/
s/"realtime-b:4100"/"127.0.0.1:14110"/
s/"indexer:9464"/"127.0.0.1:19464"/
s/dns_sd_configs: \[{ names: \["publisher"\], type: A, port: 9465 }\]/static_configs: [{ targets: ["127.0.0.1:19465", "127.0.0.1:19466"] }]/

module github.com/agenteval/agenteval-collector

go 1.26.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/goccy/go-json v0.10.6
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/jackc/pgx/v5 v5.12.0
	github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage v0.158.0
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden v0.158.0
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest v0.158.0
	github.com/open-telemetry/opentelemetry-collector-contrib/processor/groupbytraceprocessor v0.158.0
	github.com/openai/openai-go/v3 v3.60.0
	github.com/pressly/goose/v3 v3.26.0
	github.com/prometheus/client_golang v1.23.2
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.70.1
	github.com/prometheus/procfs v0.21.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/collector/component v1.64.0
	go.opentelemetry.io/collector/component/componentstatus v0.158.0
	go.opentelemetry.io/collector/component/componenttest v0.158.0
	go.opentelemetry.io/collector/config/configauth v1.64.0
	go.opentelemetry.io/collector/config/confighttp v0.158.0
	go.opentelemetry.io/collector/config/configopaque v1.64.0
	go.opentelemetry.io/collector/config/configoptional v1.64.0
	go.opentelemetry.io/collector/config/configretry v1.64.0
	go.opentelemetry.io/collector/confmap v1.64.0
	go.opentelemetry.io/collector/confmap/provider/envprovider v1.64.0
	go.opentelemetry.io/collector/confmap/provider/fileprovider v1.64.0
	go.opentelemetry.io/collector/confmap/provider/yamlprovider v1.64.0
	go.opentelemetry.io/collector/consumer v1.64.0
	go.opentelemetry.io/collector/consumer/consumererror v0.158.0
	go.opentelemetry.io/collector/consumer/consumertest v0.158.0
	go.opentelemetry.io/collector/exporter v1.64.0
	go.opentelemetry.io/collector/exporter/exporterhelper v0.158.0
	go.opentelemetry.io/collector/exporter/exportertest v0.158.0
	go.opentelemetry.io/collector/exporter/otlpexporter v0.158.0
	go.opentelemetry.io/collector/extension v1.64.0
	go.opentelemetry.io/collector/extension/extensionauth v1.64.0
	go.opentelemetry.io/collector/extension/extensiontest v0.158.0
	go.opentelemetry.io/collector/extension/xextension v0.158.0
	go.opentelemetry.io/collector/featuregate v1.64.0
	go.opentelemetry.io/collector/otelcol v0.158.0
	go.opentelemetry.io/collector/otelcol/otelcoltest v0.158.0
	go.opentelemetry.io/collector/pdata v1.64.0
	go.opentelemetry.io/collector/processor v1.64.0
	go.opentelemetry.io/collector/processor/batchprocessor v0.158.0
	go.opentelemetry.io/collector/processor/processorhelper v0.158.0
	go.opentelemetry.io/collector/processor/processortest v0.158.0
	go.opentelemetry.io/collector/receiver v1.64.0
	go.opentelemetry.io/collector/receiver/otlpreceiver v0.158.0
	go.opentelemetry.io/collector/receiver/receiverhelper v0.158.0
	go.opentelemetry.io/collector/receiver/receivertest v0.158.0
	go.opentelemetry.io/collector/service v0.158.0
	go.opentelemetry.io/otel v1.44.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.44.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.44.0
	go.opentelemetry.io/otel/metric v1.44.0
	go.opentelemetry.io/otel/sdk v1.44.0
	go.opentelemetry.io/otel/sdk/metric v1.44.0
	go.opentelemetry.io/otel/trace v1.44.0
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.28.0
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/net v0.61.0
	golang.org/x/text v0.43.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/grpc v1.83.0
	google.golang.org/protobuf v1.36.11
	modernc.org/sqlite v1.62.0
)

require (
	github.com/Microsoft/go-winio v0.6.2 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cenkalti/backoff/v7 v7.0.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/ebitengine/purego v0.10.0 // indirect
	github.com/felixge/httpsnoop v1.0.4 // indirect
	github.com/foxboron/go-tpm-keyfiles v0.0.0-20251226215517-609e4778396f // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/iimos/ucum v0.0.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/klauspost/compress v1.19.1 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/parsers/yaml v1.1.0 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.0 // indirect
	github.com/knadh/koanf/providers/env/v2 v2.0.0 // indirect
	github.com/knadh/koanf/providers/file v1.2.1 // indirect
	github.com/knadh/koanf/providers/fs v1.0.0 // indirect
	github.com/knadh/koanf/v2 v2.3.5 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/lufia/plan9stats v0.0.0-20251013123823-9fd1530e3ec3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mfridman/interpolate v0.0.2 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/batchpersignal v0.158.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatautil v0.158.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.27 // indirect
	github.com/power-devops/perfstat v0.0.0-20240221224432-82ca36839d55 // indirect
	github.com/prometheus/otlptranslator v1.0.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/rs/cors v1.11.1 // indirect
	github.com/sethvargo/go-retry v0.3.0 // indirect
	github.com/shirou/gopsutil/v4 v4.26.6 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	github.com/tidwall/gjson v1.19.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	github.com/tklauser/go-sysconf v0.3.16 // indirect
	github.com/tklauser/numcpus v0.11.0 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/collector v0.158.0 // indirect
	go.opentelemetry.io/collector/client v1.64.0 // indirect
	go.opentelemetry.io/collector/cmd/builder v0.158.0 // indirect
	go.opentelemetry.io/collector/cmd/mdatagen v0.158.0 // indirect
	go.opentelemetry.io/collector/config/configcompression v1.64.0 // indirect
	go.opentelemetry.io/collector/config/configgrpc v1.64.0 // indirect
	go.opentelemetry.io/collector/config/configmiddleware v1.64.0 // indirect
	go.opentelemetry.io/collector/config/confignet v1.64.0 // indirect
	go.opentelemetry.io/collector/config/configtelemetry v0.158.0 // indirect
	go.opentelemetry.io/collector/config/configtls v1.64.0 // indirect
	go.opentelemetry.io/collector/confmap/provider/httpprovider v1.64.0 // indirect
	go.opentelemetry.io/collector/confmap/xconfmap v0.158.0 // indirect
	go.opentelemetry.io/collector/connector v0.158.0 // indirect
	go.opentelemetry.io/collector/connector/connectortest v0.158.0 // indirect
	go.opentelemetry.io/collector/connector/xconnector v0.158.0 // indirect
	go.opentelemetry.io/collector/consumer/consumererror/xconsumererror v0.158.0 // indirect
	go.opentelemetry.io/collector/consumer/xconsumer v0.158.0 // indirect
	go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper v0.158.0 // indirect
	go.opentelemetry.io/collector/exporter/xexporter v0.158.0 // indirect
	go.opentelemetry.io/collector/extension/extensioncapabilities v0.158.0 // indirect
	go.opentelemetry.io/collector/extension/extensionmiddleware v0.158.0 // indirect
	go.opentelemetry.io/collector/filter v0.158.0 // indirect
	go.opentelemetry.io/collector/internal/componentalias v0.158.0 // indirect
	go.opentelemetry.io/collector/internal/fanoutconsumer v0.158.0 // indirect
	go.opentelemetry.io/collector/internal/schemagen v0.158.0 // indirect
	go.opentelemetry.io/collector/internal/sharedcomponent v0.158.0 // indirect
	go.opentelemetry.io/collector/internal/telemetry v0.158.0 // indirect
	go.opentelemetry.io/collector/pdata/pprofile v0.158.0 // indirect
	go.opentelemetry.io/collector/pdata/testdata v0.158.0 // indirect
	go.opentelemetry.io/collector/pdata/xpdata v0.158.0 // indirect
	go.opentelemetry.io/collector/pipeline v1.64.0 // indirect
	go.opentelemetry.io/collector/pipeline/xpipeline v0.158.0 // indirect
	go.opentelemetry.io/collector/processor/xprocessor v0.158.0 // indirect
	go.opentelemetry.io/collector/receiver/xreceiver v0.158.0 // indirect
	go.opentelemetry.io/collector/service/hostcapabilities v0.158.0 // indirect
	go.opentelemetry.io/contrib/bridges/otelzap v0.19.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc v0.69.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.69.0 // indirect
	go.opentelemetry.io/contrib/otelconf v0.24.0 // indirect
	go.opentelemetry.io/contrib/propagators/autoprop v0.69.0 // indirect
	go.opentelemetry.io/contrib/propagators/aws v1.44.0 // indirect
	go.opentelemetry.io/contrib/propagators/b3 v1.44.0 // indirect
	go.opentelemetry.io/contrib/propagators/jaeger v1.44.0 // indirect
	go.opentelemetry.io/contrib/propagators/ot v1.44.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc v0.20.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp v0.20.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc v1.44.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp v1.44.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.44.0 // indirect
	go.opentelemetry.io/otel/exporters/prometheus v0.66.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdoutlog v0.20.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdoutmetric v1.44.0 // indirect
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.44.0 // indirect
	go.opentelemetry.io/otel/log v0.20.0 // indirect
	go.opentelemetry.io/otel/sdk/log v0.20.0 // indirect
	go.opentelemetry.io/proto/otlp v1.10.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/exp v0.0.0-20260527015227-08cc5374adb3 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260615183401-62b3387ff324 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260610212136-7ab31c22f7ad // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

tool (
	go.opentelemetry.io/collector/cmd/builder
	go.opentelemetry.io/collector/cmd/mdatagen
)

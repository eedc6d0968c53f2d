package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/engine"
	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/serve"
)

// serveOptions are the flags of `mathrl serve`.
type serveOptions struct {
	modelFlags
	Host     string
	Port     int
	MaxBatch int
	// PrefixCacheBytes bounds the prompt cache's device memory (0: none).
	PrefixCacheBytes int64
	// APIKey is --api-key, else $MATHRL_ROLLOUT_API_KEY; never printed.
	APIKey               string
	WeightsRoot          string
	AllowUnauthenticated bool
	Log                  io.Writer
}

// apiKeyEnv is the environment variable that holds the API key when
// --api-key is not given (the trainer reads the same one).
const apiKeyEnv = engine.APIKeyEnv

func newServeCmd(runF func(context.Context, *serveOptions) error) *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a model over SGLang's /generate and the OpenAI /v1/completions, as a rollout server",
		Long: `Serve puts the built-in sampler behind the HTTP APIs a run's rollout engine speaks
(rollout_engine sglang or openai): SGLang's POST /generate and POST /v1/completions with
token-id prompts, plus /health, /health_generate, /get_model_info, /server_info,
/update_weights_from_disk and /flush_cache. Concurrent requests share one batch of
--max-batch sequences: one that arrives while others decode takes a free row at the next
step. A prompt is prefilled once for the n answers of a request and the identical prompts
of a batch request, and kept in a prompt cache of --prefix-cache-bytes for later requests
(emptied at every weights update and by /flush_cache). SIGTERM or Ctrl-C lets the requests in flight finish and refuses new ones (503).

--api-key (or $MATHRL_ROLLOUT_API_KEY) makes every endpoint but /health answer 401 to a
request without Authorization: Bearer <key>; --weights-root confines
/update_weights_from_disk to the folders inside it (pass the run's weights_dir). On a
--host other than loopback both are required, unless --allow-unauthenticated waives the key.`,
		Example: `  mathrl serve --model ./models/tiny
  mathrl serve --model ./models/tiny --port 30001 --max-batch 32 --backend xla-cpu
  MATHRL_ROLLOUT_API_KEY=... mathrl serve --model ./models/tiny --host 0.0.0.0 --weights-root /shared/run/weights`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = cmd.ErrOrStderr()
			if err := opts.checkExposure(); err != nil {
				return err
			}
			if runF == nil {
				runF = runServe
			}
			return runF(cmd.Context(), &opts)
		},
	}
	addModelFlags(cmd, &opts.modelFlags)
	cmd.Flags().StringVar(&opts.Host, "host", "127.0.0.1", "address to listen on (loopback unless set otherwise)")
	cmd.Flags().IntVar(&opts.Port, "port", 30000, "port to listen on")
	cmd.Flags().IntVar(&opts.MaxBatch, "max-batch", 16, "sequences decoded together")
	cmd.Flags().Int64Var(&opts.PrefixCacheBytes, "prefix-cache-bytes", serve.DefaultPrefixCacheBytes, "most device memory the prompt cache holds, emptied at every weights update (0: no prompt cache)")
	cmd.Flags().StringVar(&opts.APIKey, "api-key", "", "key every request but /health must send as Authorization: Bearer <key> (empty: $"+apiKeyEnv+"; required off loopback)")
	cmd.Flags().StringVar(&opts.WeightsRoot, "weights-root", "", "folder /update_weights_from_disk may load from, the run's weights_dir (required off loopback; empty on loopback: any path)")
	cmd.Flags().BoolVar(&opts.AllowUnauthenticated, "allow-unauthenticated", false, "serve a --host other than loopback without an API key: anyone who reaches the port may sample and swap the weights")
	cmd.MarkFlagRequired("model")
	return cmd
}

func runServe(ctx context.Context, opts *serveOptions) error {
	dtype, err := qwen3.ParseDType(opts.DType)
	if err != nil {
		return err
	}
	b, _, err := opts.openBackend(opts.Log)
	if err != nil {
		return err
	}
	cacheBytes := opts.PrefixCacheBytes
	if cacheBytes <= 0 {
		cacheBytes = -1 // serve.Options' "no cache"
	}
	srv, err := serve.New(serve.Options{Backend: b, ModelPath: opts.Model, DType: dtype, MaxBatch: opts.MaxBatch,
		PrefixCacheBytes: cacheBytes, APIKey: opts.APIKey, WeightsRoot: opts.WeightsRoot})
	if err != nil {
		return err
	}
	return srv.ListenAndServe(ctx, net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)), opts.Log)
}

// checkExposure takes the API key from the environment when --api-key is not
// given, then applies serve.CheckExposure, printing its warning.
func (o *serveOptions) checkExposure() error {
	if o.APIKey == "" {
		o.APIKey = os.Getenv(apiKeyEnv)
	}
	warning, err := serve.CheckExposure(o.Host, o.APIKey, o.WeightsRoot, o.AllowUnauthenticated)
	if warning != "" {
		fmt.Fprintf(o.Log, "mathrl: WARNING: %s\n", warning)
	}
	return err
}

package main

import (
	"context"
	"io"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/mathrl/mathrl/gomlx_trainer/qwen3"
	"github.com/mathrl/mathrl/gomlx_trainer/serve"
)

// serveOptions are the flags of `mathrl serve`.
type serveOptions struct {
	modelFlags
	Host     string
	Port     int
	MaxBatch int
	Log      io.Writer
}

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
step. SIGTERM or Ctrl-C lets the requests in flight finish and refuses new ones (503).`,
		Example: `  mathrl serve --model ./models/tiny
  mathrl serve --model ./models/tiny --port 30001 --max-batch 32 --backend xla-cpu`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Log = cmd.ErrOrStderr()
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
	srv, err := serve.New(serve.Options{Backend: b, ModelPath: opts.Model, DType: dtype, MaxBatch: opts.MaxBatch})
	if err != nil {
		return err
	}
	return srv.ListenAndServe(ctx, net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)), opts.Log)
}

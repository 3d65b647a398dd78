/**
 * Where the background pipelines run: effect/cluster sharding with its message
 * and runner storage in modelgate's own database, and the cluster workflow engine
 * on top. On a PostgreSQL server every process is a runner (socket transport,
 * advisory shard locks); embedded on PGlite one process runs every shard.
 */
import { NodeClusterSocket } from "@effect/platform-node"
import { Duration, Layer, Option } from "effect"
import type { ConfigError } from "effect/Config"
import { ClusterWorkflowEngine, MessageStorage, RunnerAddress, Sharding, ShardingConfig, SingleRunner } from "effect/cluster"
import type { Runners } from "effect/cluster"
import * as Digest from "effect/crypto/Digest"
import type { SocketServer } from "effect/socket"
import type { SqlClient } from "effect/sql/SqlClient"
import type { WorkflowEngine } from "effect/workflow"

/**
 * The lock timing of the runners, the bound on how long a dead runner's work waits.
 *
 * A runner holds its shards with PostgreSQL advisory locks on one session and
 * refreshes its heartbeat every `shardLockRefreshInterval`. When a runner process
 * dies, its session closes and the locks go at once; the others stop counting it
 * once its heartbeat is older than `shardLockExpiration` (a frozen process also
 * loses its locks then: the server ends the idle lock session after the same
 * duration). Its shards are reassigned at the next `refreshAssignmentsInterval`,
 * and their unfinished messages (workflow runs, indexing jobs) are read from
 * storage within one `entityMessagePollInterval`. So a job interrupted by a crash
 * resumes within shardLockExpiration + refreshAssignmentsInterval +
 * entityMessagePollInterval (25 s with these defaults), on another runner,
 * replaying its finished workflow steps from storage.
 */
export interface LockTiming {
  readonly shardLockExpiration: Duration.Duration
  readonly shardLockRefreshInterval: Duration.Duration
  readonly refreshAssignmentsInterval: Duration.Duration
  readonly entityMessagePollInterval: Duration.Duration
  readonly runnerHealthCheckInterval: Duration.Duration
}

/** The defaults of {@link LockTiming}: a crashed runner's jobs resume within 25 seconds. */
export const defaultLockTiming: LockTiming = {
  shardLockExpiration: Duration.seconds(20),
  shardLockRefreshInterval: Duration.seconds(5),
  refreshAssignmentsInterval: Duration.seconds(3),
  entityMessagePollInterval: Duration.seconds(2),
  runnerHealthCheckInterval: Duration.seconds(10)
}

/** The longest a job of a crashed runner waits before another runner resumes it. */
export const failoverBound = (timing: LockTiming): Duration.Duration =>
  Duration.sum(Duration.sum(timing.shardLockExpiration, timing.refreshAssignmentsInterval), timing.entityMessagePollInterval)

/** The services a cluster layer provides to the pipelines. */
export type Cluster = Sharding.Sharding | MessageStorage.MessageStorage | WorkflowEngine.WorkflowEngine

/** Options of a runner process on a PostgreSQL server. */
export interface RunnerOptions {
  /** Host other runners reach this one at. */
  readonly host: string
  /** Port this runner listens on for the other runners. */
  readonly port: number
  readonly timing?: LockTiming | undefined
  /** Every runner must use the same count; 300 when omitted. */
  readonly shardsPerGroup?: number | undefined
}

const shardingConfig = (timing: LockTiming): Partial<ShardingConfig.ShardingConfig["Service"]> => ({
  shardLockExpiration: timing.shardLockExpiration,
  shardLockRefreshInterval: timing.shardLockRefreshInterval,
  refreshAssignmentsInterval: timing.refreshAssignmentsInterval,
  entityMessagePollInterval: timing.entityMessagePollInterval,
  runnerHealthCheckInterval: timing.runnerHealthCheckInterval
})

/**
 * A runner on a PostgreSQL server: it takes a share of the shards, serves the
 * other runners over a socket, and takes over the shards of runners that die.
 * Cluster tables (`cluster_*`) are created in the database of the SqlClient.
 */
export const layerRunner = (
  options: RunnerOptions
): Layer.Layer<Cluster | Runners.Runners, ConfigError | SocketServer.SocketServerError, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(NodeClusterSocket.layer({
      storage: "sql",
      runnerHealth: "ping",
      shardingConfig: {
        ...shardingConfig(options.timing ?? defaultLockTiming),
        ...(options.shardsPerGroup === undefined ? {} : { shardsPerGroup: options.shardsPerGroup }),
        runnerAddress: Option.some(RunnerAddress.make(options.host, options.port)),
        runnerListenAddress: Option.some(RunnerAddress.make("0.0.0.0", options.port))
      }
    }))
  )

/**
 * A client of a PostgreSQL cluster that runs no shards: it can start workflows and
 * send jobs (they are stored, then run by the runners), e.g. from an API process.
 */
export const layerClient = (
  options: { readonly timing?: LockTiming | undefined; readonly shardsPerGroup?: number | undefined } = {}
): Layer.Layer<Cluster | Runners.Runners, ConfigError, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(NodeClusterSocket.layer({
      storage: "sql",
      clientOnly: true,
      shardingConfig: {
        ...shardingConfig(options.timing ?? defaultLockTiming),
        ...(options.shardsPerGroup === undefined ? {} : { shardsPerGroup: options.shardsPerGroup })
      }
    }))
  )

/**
 * One process running every shard, for the embedded PGlite database (or a single
 * server process). PGlite has one backend session, so advisory locks would be
 * shared by every user of it: shard locks are rows of `cluster_locks` instead.
 */
export const layerSingle = (
  options: { readonly timing?: LockTiming | undefined } = {}
): Layer.Layer<Cluster, ConfigError, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(SingleRunner.layer({
      runnerStorage: "sql",
      shardingConfig: { ...shardingConfig(options.timing ?? defaultLockTiming), shardLockDisableAdvisory: true }
    })),
    Layer.provide(Digest.layerWebCrypto)
  )

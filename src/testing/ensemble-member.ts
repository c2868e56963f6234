import { ZooKeeperProcess } from './zookeeper-process.js';
import type { LaunchPlan } from './zookeeper-process.js';

/**
 * One member of a {@link ZooKeeperEnsemble}, with the same controls as a standalone server
 * (stop, kill, restart, pause, resume, ...). Created by the ensemble; `id` is its `myid`.
 */
export class EnsembleMember extends ZooKeeperProcess {
  /** The member's `myid`, 1-based, also its index + 1 in {@link ZooKeeperEnsemble.members}. */
  readonly id: number;
  readonly #plan: () => LaunchPlan | undefined;
  readonly #closed: () => boolean;

  /** @internal Members are created by {@link ZooKeeperEnsemble}. */
  constructor(id: number, plan: () => LaunchPlan | undefined, closed: () => boolean) {
    super(`ensemble member ${id}`);
    this.id = id;
    this.#plan = plan;
    this.#closed = closed;
  }

  protected override launchPlan(): LaunchPlan | undefined {
    return this.#plan();
  }

  protected override isClosed(): boolean {
    return this.#closed();
  }
}

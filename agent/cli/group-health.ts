/**
 * Whether the controller group can commit, as the CLI tells a user who cannot get an
 * answer: with fewer members reachable than a majority of the voters, every command says
 * so in one line — how many are reachable, how many are needed, which ones — instead of
 * waiting out its retries and printing the last transport error. Juju's client gives up
 * on an unreachable API with the addresses it tried (api/apiclient.go); a Raft group
 * without a quorum is what cantrip adds, so the line names the numbers Raft needs.
 *
 * Members are named as `controllers` and `show-controller` name them: c0, c1, … after
 * their data directories.
 */
import { controllerMemberName, type ControllerEntry } from './cli-home.ts'
import type { ControllerStatus } from './connection.ts'

export interface MemberAnswer {
  peer: string
  status: ControllerStatus | undefined
}

/** The members' names (c0, c1, …, their data directories'), by peer id; a voter this client does not list shows by the end of its peer id. */
export function memberName (entry: ControllerEntry, peer: string): string {
  const member = entry.controllers.find(m => m['peer-id'] === peer)
  return member === undefined ? peer.slice(-8) : controllerMemberName(member)
}

/**
 * The one line for a group that cannot commit, or undefined while a majority of its voters
 * answers. The voters are those the newest answering member knows (the Raft
 * configuration); with no answer at all, every member the client knows.
 */
export function quorumLostMessage (name: string, entry: ControllerEntry, answers: readonly MemberAnswer[]): string | undefined {
  const newest = answers.map(a => a.status).filter((s): s is ControllerStatus => s !== undefined).sort((a, b) => b.term - a.term)[0]
  const voters = newest?.voters.length ? newest.voters : entry.controllers.map(m => m['peer-id'])
  const reachable = answers.filter(a => a.status !== undefined && voters.includes(a.peer)).map(a => a.peer)
  const needed = Math.floor(voters.length / 2) + 1
  if (reachable.length >= needed) return undefined
  const names = reachable.map(peer => memberName(entry, peer)).sort()
  return `controller group ${JSON.stringify(name)}: ${reachable.length} of ${voters.length} controllers reachable, ${needed} needed to commit; reachable: ${names.length === 0 ? 'none' : names.join(', ')}`
}

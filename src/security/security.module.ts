import { Inject, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { Ledger } from '../ledger';
import { ensureOwnerToken } from './owner-token';

/** First start: creates the owner token file (mode 0600) and says where it is. */
@Injectable()
export class OwnerTokenBootstrap implements OnApplicationBootstrap {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  async onApplicationBootstrap(): Promise<void> {
    const r = await ensureOwnerToken(this.ledger);
    if (r.created) process.stdout.write(`review-ledger: owner token for workspace "${r.workspaceId}" written to ${r.file} (mode 0600)\n`);
  }
}

@Module({ providers: [OwnerTokenBootstrap] })
export class SecurityModule {}

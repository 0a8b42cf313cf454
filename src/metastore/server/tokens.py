"""The delegation-token calls of the Thrift front (get_delegation_token, renew_delegation_token,
cancel_delegation_token): a mixin of server/handler.py's Handler. The operations are catalog/tokens.py's, on
the catalog's store; a token's holder then authenticates with SASL DIGEST-MD5 (server/sasl.py)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..catalog.tokens import DelegationTokens

if TYPE_CHECKING:
    from ..catalog.service import Catalog

_LOCK = threading.Lock()


class DelegationTokenCalls:
    catalog: Catalog

    def _tokens(self) -> DelegationTokens:
        tokens: DelegationTokens | None = getattr(self, "_delegation_tokens", None)
        if tokens is None:
            with _LOCK:
                tokens = getattr(self, "_delegation_tokens", None)
                if tokens is None:
                    tokens = DelegationTokens.of(self.catalog.store)
                    self._delegation_tokens = tokens
        return tokens

    def get_delegation_token(self, token_owner: str, renewer_kerberos_principal_name: str) -> str:
        return self._tokens().get(token_owner, renewer_kerberos_principal_name)

    def renew_delegation_token(self, token_str_form: str) -> int:
        return self._tokens().renew(token_str_form)

    def cancel_delegation_token(self, token_str_form: str) -> None:
        self._tokens().cancel(token_str_form)

# pip install a2a-sdk==1.3.0; run: HUB=http://127.0.0.1:7878 TOKEN=$(baton token add you) python example.py
import asyncio, os, uuid, httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, SendMessageRequest, TaskState

async def main():
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {os.environ['TOKEN']}"}, timeout=60)
    card = await A2ACardResolver(http, f"{os.environ['HUB']}/a2a/agents/dev").get_agent_card()
    client = ClientFactory(ClientConfig(httpx_client=http, streaming=False, polling=True)).create(card)
    task = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="Fix the date parser\n2026-02-30 is accepted")])
    task.metadata.update({"baton": {"project": "default"}})  # needed once the hub has 2+ projects
    async for event in client.send_message(SendMessageRequest(message=task)):
        print(event.task.id, TaskState.Name(event.task.status.state))  # default/T-1 TASK_STATE_SUBMITTED

asyncio.run(main())

// SPDX-License-Identifier: GPL-2.0
/*
 * vmx: interrupts and NAPI.
 *
 * Vector allocation (MSI-X, else MSI, else INTx), the handlers, masking,
 * and the NAPI poll that serves one channel: its stack TX queue, its XDP TX
 * queue and AF_XDP TX ring where it has them, and its RX queue.
 */
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vmx.h"

/**
 * vmx_mask_all() - mask or unmask every vector the device raises
 * @vp: device
 * @mask: true to mask
 *
 * The XDP TX vector is only unmasked while frames are in flight.
 */
void vmx_mask_all(struct vmx_priv *vp, bool mask)
{
	u32 i;

	for (i = 0; i < vp->max_queues; i++)
		WRITE_ONCE(vp->qv[i].masked, mask);
	for (i = 0; i < vp->num_vecs; i++)
		vmx_mask_vec(vp, i, mask || i == vp->xdp_vec);
}

/* Read and acknowledge pending events; the work item acts on them. */
static void vmx_check_events(struct vmx_priv *vp)
{
	u32 ecr = le32_to_cpu(READ_ONCE(vp->shared->ecr));

	if (!ecr)
		return;
	vmx_wr_vd(vp, VMX_REG_ECR, ecr);
	atomic_or(ecr, &vp->events);
	schedule_work(&vp->event_work);
}

static irqreturn_t vmx_intr_queue(int irq, void *data)
{
	struct vmx_qvec *qv = data;

	if (qv->vp->mask_mode == VMX_IMM_ACTIVE)
		vmx_mask_vec(qv->vp, qv->idx, true);
	WRITE_ONCE(qv->masked, true);
	napi_schedule_irqoff(&qv->napi);
	return IRQ_HANDLED;
}

static irqreturn_t vmx_intr_event(int irq, void *data)
{
	struct vmx_priv *vp = data;

	if (vp->mask_mode == VMX_IMM_ACTIVE)
		vmx_mask_vec(vp, vp->event_vec, true);
	vmx_check_events(vp);
	vmx_mask_vec(vp, vp->event_vec, false);
	return IRQ_HANDLED;
}

/* Completions of the dedicated XDP TX queues: their NAPIs reclaim them. */
static irqreturn_t vmx_intr_xdp(int irq, void *data)
{
	struct vmx_priv *vp = data;
	u32 q;

	/* stays masked until a sender leaves frames in flight again */
	if (vp->mask_mode == VMX_IMM_ACTIVE)
		vmx_mask_vec(vp, vp->xdp_vec, true);
	for (q = 0; q < vp->qs.nxdp; q++)
		napi_schedule_irqoff(&vp->qv[q].napi);
	return IRQ_HANDLED;
}

/* MSI or INTx: one vector for queue pair 0 and the events. */
static irqreturn_t vmx_intr_single(int irq, void *data)
{
	struct vmx_priv *vp = data;

	if (vp->intr_type == VMX_IT_INTX && !vmx_rd_vd(vp, VMX_REG_ICR))
		return IRQ_NONE;
	if (vp->mask_mode == VMX_IMM_ACTIVE)
		vmx_mask_vec(vp, 0, true);
	WRITE_ONCE(vp->qv[0].masked, true);
	vmx_check_events(vp);
	napi_schedule_irqoff(&vp->qv[0].napi);
	return IRQ_HANDLED;
}

/**
 * vmx_alloc_vectors() - allocate the interrupt vectors, MSI-X first
 * @vp: device; max_queues is lowered to what the vectors allow
 * @conf_type: the interrupt type the device asks for (VMX_INTR_TYPE_*)
 *
 * MSI-X with vector 0 for events, 1 for the XDP TX queues when there are
 * enough vectors, then one per queue pair; else MSI, else INTx, each with
 * one vector for queue pair 0 and the events.
 *
 * Return: 0 or a negative errno.
 */
int vmx_alloc_vectors(struct vmx_priv *vp, u32 conf_type)
{
	struct pci_dev *pdev = vp->pdev;
	int n;

	vp->xdp_vec = VMX_NO_VEC;
	/*
	 * Events on vector 0, the XDP TX queues on 1, then one per queue
	 * pair: whatever the channel count, the vectors of a configuration
	 * the device reads from the legacy block (at most 8 TX queues) stay
	 * below its 25, while the extended block reaches every one.
	 */
	if (conf_type == VMX_INTR_TYPE_AUTO || conf_type == VMX_INTR_TYPE_MSIX) {
		n = pci_alloc_irq_vectors(pdev, 2, vp->max_queues + 2,
					  PCI_IRQ_MSIX);
		if (n > 0) {
			vp->intr_type = VMX_IT_MSIX;
			vp->num_vecs = n;
			vp->event_vec = 0;
			if (n == vp->max_queues + 2)
				vp->xdp_vec = 1;
			else
				vp->max_queues = n - 1;
			return 0;
		}
	}
	vp->max_queues = 1;
	vp->num_vecs = 1;
	vp->event_vec = 0;
	if (conf_type != VMX_INTR_TYPE_INTX &&
	    pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI) == 1) {
		vp->intr_type = VMX_IT_MSI;
		return 0;
	}
	n = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_INTX);
	if (n != 1)
		return n < 0 ? n : -ENODEV;
	vp->intr_type = VMX_IT_INTX;
	return 0;
}

/**
 * vmx_free_irqs() - free the handlers vmx_request_irqs() installed
 * @vp: device
 */
void vmx_free_irqs(struct vmx_priv *vp)
{
	u32 i;

	if (vp->intr_type != VMX_IT_MSIX) {
		free_irq(pci_irq_vector(vp->pdev, 0), vp);
		return;
	}
	for (i = 0; i < vp->max_queues; i++)
		free_irq(pci_irq_vector(vp->pdev, vp->qv[i].idx), &vp->qv[i]);
	if (vp->xdp_vec != VMX_NO_VEC)
		free_irq(pci_irq_vector(vp->pdev, vp->xdp_vec), vp);
	free_irq(pci_irq_vector(vp->pdev, vp->event_vec), vp);
}

/**
 * vmx_request_irqs() - install the handlers of every allocated vector
 * @vp: device
 *
 * Return: 0 or a negative errno; on error nothing is left installed.
 */
int vmx_request_irqs(struct vmx_priv *vp)
{
	struct net_device *nd = vp->netdev;
	u32 i;
	int err;

	if (vp->intr_type != VMX_IT_MSIX) {
		snprintf(vp->qv[0].name, sizeof(vp->qv[0].name), "%s", nd->name);
		err = request_irq(pci_irq_vector(vp->pdev, 0), vmx_intr_single,
				  vp->intr_type == VMX_IT_INTX ? IRQF_SHARED : 0,
				  vp->qv[0].name, vp);
		if (!err)
			vmx_napi_set_irq(&vp->qv[0].napi,
					 pci_irq_vector(vp->pdev, 0));
		return err;
	}
	for (i = 0; i < vp->max_queues; i++) {
		struct vmx_qvec *qv = &vp->qv[i];

		snprintf(qv->name, sizeof(qv->name), "%s-rxtx-%u", nd->name, i);
		err = request_irq(pci_irq_vector(vp->pdev, qv->idx),
				  vmx_intr_queue, 0, qv->name, qv);
		if (err)
			goto err_free;
	}
	if (vp->xdp_vec != VMX_NO_VEC) {
		snprintf(vp->xdp_irq_name, sizeof(vp->xdp_irq_name),
			 "%s-xdp-tx", nd->name);
		err = request_irq(pci_irq_vector(vp->pdev, vp->xdp_vec),
				  vmx_intr_xdp, 0, vp->xdp_irq_name, vp);
		if (err)
			goto err_free;
	}
	err = request_irq(pci_irq_vector(vp->pdev, vp->event_vec),
			  vmx_intr_event, 0, nd->name, vp);
	if (!err)
		return 0;
	if (vp->xdp_vec != VMX_NO_VEC)
		free_irq(pci_irq_vector(vp->pdev, vp->xdp_vec), vp);
err_free:
	while (i--)
		free_irq(pci_irq_vector(vp->pdev, vp->qv[i].idx), &vp->qv[i]);
	return err;
}

/**
 * vmx_sync_irqs() - wait for the handlers running on any vector
 * @vp: device
 */
void vmx_sync_irqs(struct vmx_priv *vp)
{
	u32 i;

	for (i = 0; i < vp->num_vecs; i++)
		synchronize_irq(pci_irq_vector(vp->pdev, i));
}

/* ---- NAPI ---- */

static int vmx_poll(struct napi_struct *napi, int budget)
{
	struct vmx_qvec *qv = container_of(napi, struct vmx_qvec, napi);
	struct vmx_priv *vp = qv->vp;
	struct vmx_qset *qs = &vp->qs;
	struct vmx_txq *xq = NULL;
	struct vmx_rxq *rxq;
	u32 i = qv->qid;
	int work = 0;

	/* netpoll (budget 0): skb completions only, no XDP, no RX */
	vmx_tx_clean(&qs->txq[i], budget, !budget);
	if (!budget)
		return 0;
	if (i < qs->nxdp) {
		xq = &qs->txq[qs->nq + i];
		/*
		 * Unlocked look first: a sender holding the lock reclaims
		 * (and re-arms the XDP TX vector for what stays in flight)
		 * itself. A queue with nothing handed to the device needs
		 * nothing (a completion written there anyway is checked as
		 * any other once the queue is used again); one with frames
		 * in flight needs the locked visit even with nothing
		 * completed yet: the XDP TX interrupt masked the vector for
		 * every queue, and this queue's re-arm is what lets its
		 * later completions in.
		 */
		if (data_race(xq->posted != xq->clean))
			vmx_xdp_txq_poll(xq);
	}

	rxq = &qs->rxq[i];
	if (!vmx_rx_idle(rxq))
		work = vmx_rx_poll(rxq, budget);
	/* zero-copy AF_XDP: the channel's TX ring; more waiting, poll again */
	if (xq && xq->xsk_pool && vmx_xsk_xmit(xq, budget) >= budget)
		work = budget;
	if (work >= budget)
		return budget;

	if (napi_complete_done(napi, work)) {
		/*
		 * Only a vector that fired is masked in mode auto: a poll
		 * an AF_XDP wakeup or busy poll started needs no unmask (a
		 * register write, an exit on KVM and ESXi). The flag is
		 * cleared before the write: an interrupt right after it
		 * sets it again for the poll it schedules. The other modes
		 * unmask always (active: the handler's own mask write may
		 * still be on its way; lazy: no rule known).
		 *
		 * No look at the rings after the unmask: the device holds an
		 * event that comes while the vector is masked and raises it
		 * at the unmask (QEMU's model does; the in-tree driver counts
		 * on ESXi doing so). One that comes while a poll runs on an
		 * unmasked vector reschedules it (NAPI's missed bit).
		 */
		if (vp->mask_mode != VMX_IMM_AUTO || READ_ONCE(qv->masked)) {
			WRITE_ONCE(qv->masked, false);
			vmx_mask_vec(vp, qv->idx, false);
		}
	}
	return work;
}

/**
 * vmx_napi_list() - list the NAPI instances of the first @nq channels
 * @vp: device
 * @nq: active channels
 *
 * NAPI instances are listed for the active channels only: the core walks
 * every listed one (threaded mode, busy poll, netlink dumps), and one that
 * is never enabled makes 7.3's napi_set_threaded() wait for it forever.
 * Every instance was added once at probe, and a deleted one keeps the
 * disabled state, so an interrupt on an inactive channel's vector
 * schedules nothing. Called under rtnl with the instances beyond @nq
 * disabled.
 */
void vmx_napi_list(struct vmx_priv *vp, u32 nq)
{
	u32 q;

	for (q = vp->nr_napi; q < nq; q++) {
		vmx_napi_add(vp->netdev, &vp->qv[q].napi, vmx_poll, q);
		if (vp->intr_type == VMX_IT_MSIX)
			vmx_napi_set_irq(&vp->qv[q].napi,
					 pci_irq_vector(vp->pdev, vp->qv[q].idx));
	}
	for (q = nq; q < vp->nr_napi; q++)
		netif_napi_del(&vp->qv[q].napi);
	vp->nr_napi = nq;
}
